// Values of type `match_kind` (P4_16 §7.1.3: the match kinds are constants
// of that type) in locals, constants, tuples, comparisons and extern
// arguments; a user extern type with two constructors, overloaded by their
// number of parameters (§7.2.12), given a tuple of match kinds (as p4c's
// issue3091 gives one); and the bit<0> literal `0w0` (§7.1.6.2).
#include <core.p4>
#include <v1model.p4>

/// Counts how many of the kinds it was built with equal `k`, plus `base`
/// (0 when the one-parameter constructor built it).
extern KindSet<M> {
    KindSet(M kinds, bit<8> base);
    KindSet(M kinds);
    bit<8> count(in match_kind k);
}

/// The code of `kind` (its position among the match kinds) plus 0x10.
extern bit<8> kind_code<T>(in T kind);

header h_t {
    bit<8> a;
    bit<8> with_base;
    bit<8> plain;
    bit<8> code;
    bit<8> is_fixed;
    bit<8> z;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

const tuple<match_kind, match_kind> lookup_kinds = {exact, lpm};
const match_kind fixed = ternary;

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    KindSet<tuple<match_kind, match_kind>>(lookup_kinds, 8w0x40) with_base;
    KindSet<tuple<match_kind, match_kind>>({ternary, ternary}) plain;
    apply {
        sm.egress_spec = 1;
        match_kind m = exact;
        if (hdr.h.a == 1) {
            m = lpm;
        } else if (hdr.h.a == 2) {
            m = lookup_kinds[0] == exact ? fixed : lpm;
        }
        hdr.h.with_base = with_base.count(m);
        hdr.h.plain = plain.count(m);
        hdr.h.code = kind_code(m);
        hdr.h.is_fixed = m == fixed ? 8w1 : 8w0;
        bit<0> zero = 0w0;
        hdr.h.z = (hdr.h.z ++ 0w0) + (bit<8>)(zero + 0w0) + 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(),
         MyDeparser()) main;
