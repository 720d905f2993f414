// A varbit field may be wider than the 2048 bits a bit<W> may be (P4_16
// §7.1.6.4 asks only that its maximum width be a positive compile-time
// constant): INT's metadata stack is `varbit<8032>`, (255 - 4) words of 32
// bits. Here 300 bytes (2400 bits) of one are extracted, checksummed over and
// emitted unchanged.
#include <core.p4>
#include <v1model.p4>

header shim_t {
    bit<8> len_words;
}

header stack_t {
    varbit<8032> data;
}

header sum_t {
    bit<16> csum;
}

struct headers_t {
    shim_t shim;
    stack_t stack;
    sum_t sum;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.shim);
        pkt.extract(hdr.stack, (bit<32>)hdr.shim.len_words << 5);
        pkt.extract(hdr.sum);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.sum.isValid(), { hdr.stack.data }, hdr.sum.csum,
                        HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.shim);
        pkt.emit(hdr.stack);
        pkt.emit(hdr.sum);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
