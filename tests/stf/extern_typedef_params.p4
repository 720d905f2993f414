// A typedef of an extern type (P4_16 §7.5: a typedef names any type; p4c
// resolves it to the type it names) as the type of extern parameters:
// `Take` (a sub-parser) takes a `Bytes`, an alias of the alias `Reg8`, as an
// apply parameter, `Add` (a sub-control) a `Reg8` as an apply parameter and
// a `Hits` as a constructor parameter. Both reach the top-level `totals`
// and MyIngress's `hits`: each packet adds `add` to `totals[idx]`, reporting
// the cell as the parser saw it and before and after the add.
#include <core.p4>
#include <v1model.p4>

typedef register<bit<8>> Reg8;
typedef Reg8 Bytes;
typedef counter Hits;

header h_t {
    bit<8> idx;
    bit<8> add;
    bit<8> parsed;
    bit<8> before;
    bit<8> after;
}

struct headers_t { h_t h; }
struct meta_t { }

Reg8(4) totals;

parser Take(packet_in pkt, out h_t h, Bytes r) {
    bit<8> v;
    state start {
        pkt.extract(h);
        r.read(v, (bit<32>)h.idx);
        h.parsed = v;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    Take() take;
    state start {
        take.apply(pkt, hdr.h, totals);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control Add(inout h_t h, Reg8 r)(Hits c) {
    bit<8> v;
    apply {
        r.read(v, (bit<32>)h.idx);
        h.before = v;
        v = v + h.add;
        r.write((bit<32>)h.idx, v);
        h.after = v;
        c.count((bit<32>)h.idx);
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    counter(4, CounterType.packets) hits;
    Add(hits) add;
    apply {
        add.apply(hdr.h, totals);
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
