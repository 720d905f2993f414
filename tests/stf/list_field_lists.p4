// A `list` variable or constant as a field list (P4_16 §7.2.10: a list's
// value is its elements in order; v1model's hash, checksums and digest
// take a field list): `hash(.., l, ..)` with `list<bit<8>> l = {a, c}`
// hashes what `{a, c}` would, a constant list likewise, and a list inside
// a list expression gives its elements in place. The identity hash and
// csum16 make the values plain to read.
#include <core.p4>
#include <v1model.p4>

header data_t {
    bit<8>  a;
    bit<8>  c;
    bit<16> from_var;
    bit<16> from_expr;
    bit<16> from_const;
    bit<16> nested;
    bit<16> ck;
}

struct headers_t { data_t d; }
struct meta_t { }

const list<bit<8>> K = {8w1, 8w2};

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.d);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        list<bit<8>> l = {hdr.d.a, hdr.d.c};
        hash(hdr.d.from_var, HashAlgorithm.identity, 16w0, l, 32w65536);
        hash(hdr.d.from_expr, HashAlgorithm.identity, 16w0, {hdr.d.a, hdr.d.c}, 32w65536);
        hash(hdr.d.from_const, HashAlgorithm.identity, 16w0, K, 32w65536);
        // {a, c, a} is 24 bits; modulo 2^16 keeps c and a.
        hash(hdr.d.nested, HashAlgorithm.identity, 16w0, {l, hdr.d.a}, 32w65536);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        list<bit<8>> l = {hdr.d.a, hdr.d.c};
        update_checksum(true, l, hdr.d.ck, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.d); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
