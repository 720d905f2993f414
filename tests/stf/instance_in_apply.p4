// Instantiations inside an apply block (p4c accepts them and hoists each
// into one object of the control): a sub-control instantiated in a nested
// block and a register instantiated among the apply statements. The
// register keeps its state across packets: it is one object, not one per
// execution of the block.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8> k;
    bit<8> v;
    bit<8> n;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control AddTen(inout bit<8> v) {
    apply {
        v = v + 10;
    }
}

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.data.k == 1) {
            AddTen() add;
            add.apply(hdr.data.v);
        }
        register<bit<8>>(1) seen;
        bit<8> n;
        seen.read(n, 0);
        seen.write(0, n + 1);
        hdr.data.n = n;
        sm.egress_spec = 1;
    }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.data);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
