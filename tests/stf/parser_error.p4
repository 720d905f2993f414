// Parser errors reach ingress in standard_metadata.parser_error: a failed
// verify() with a program-declared error, and PacketTooShort. The egress
// port tells which error the packet had.
#include <core.p4>
#include <v1model.p4>

error {
    BadVersion
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header data_t {
    bit<8>  version;
    bit<8>  flags;
    bit<16> value;
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
        verify(hdr.data.version == 1, error.BadVersion);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.NoError) {
            sm.egress_spec = 1;
        } else if (sm.parser_error == error.BadVersion) {
            hdr.data.flags = 0xbd;
            sm.egress_spec = 2;
        } else if (sm.parser_error == error.PacketTooShort) {
            sm.egress_spec = 3;
        } else {
            mark_to_drop(sm);
        }
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
