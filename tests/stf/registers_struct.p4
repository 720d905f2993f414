// Registers whose cells are structs (p4c's v1model: `register<S>`), nested
// structs and bool fields included: each cell holds the fields concatenated,
// the first field in the high bits, so a read gives back each field exactly
// as written and no field bleeds into its neighbour.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

// Reports the cell as it was before this packet updated it.
header data_t {
    bit<8> idx;
    bit<8> val;
    bit<8> count;
    bit<8> seen;
    bit<8> last;
    bit<8> p;
}

struct headers_t {
    ethernet_t ethernet;
    data_t     data;
}

struct meta_t { }

struct nibbles_t {
    bit<4> hi;
    bit<4> lo;
}

// 8 + 1 + 7 + 8 = 24 bits a cell.
struct cell_t {
    bit<8>    count;
    bool      seen;
    bit<7>    last;
    nibbles_t p;
}

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    register<cell_t>(4) cells;
    apply {
        cell_t c;
        cells.read(c, (bit<32>)hdr.data.idx);
        hdr.data.count = c.count;
        hdr.data.seen = c.seen ? 8w1 : 8w0;
        hdr.data.last = (bit<8>)c.last;
        hdr.data.p = c.p.hi ++ c.p.lo;
        c.count = c.count + 1;
        c.seen = true;
        c.last = hdr.data.val[6:0];
        c.p.hi = 0xf;
        c.p.lo = c.p.lo + 2;
        cells.write((bit<32>)hdr.data.idx, c);
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
