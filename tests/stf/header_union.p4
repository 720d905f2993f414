// A header union holding IPv4 or IPv6. Ingress decrements the TTL/hop
// limit of whichever member is valid; an IPv4 packet with TOS 0xff is
// rewritten into an IPv6 packet (setValid on one member invalidates the
// other), with the IPv4 addresses mapped into ::ffff:0:0/96.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

header ipv6_t {
    bit<4>   version;
    bit<8>   trafficClass;
    bit<20>  flowLabel;
    bit<16>  payloadLen;
    bit<8>   nextHdr;
    bit<8>   hopLimit;
    bit<128> srcAddr;
    bit<128> dstAddr;
}

header_union ip_t {
    ipv4_t v4;
    ipv6_t v6;
}

struct headers_t {
    ethernet_t ethernet;
    ip_t       ip;
}

struct meta_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_v4;
            0x86dd: parse_v6;
            default: accept;
        }
    }
    state parse_v4 {
        pkt.extract(hdr.ip.v4);
        transition accept;
    }
    state parse_v6 {
        pkt.extract(hdr.ip.v6);
        transition accept;
    }
}

control MyVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t sm) {
    apply {
        if (hdr.ip.v4.isValid() && hdr.ip.v4.diffserv == 0xff) {
            bit<32> src = hdr.ip.v4.srcAddr;
            bit<32> dst = hdr.ip.v4.dstAddr;
            bit<8> ttl = hdr.ip.v4.ttl;
            bit<8> proto = hdr.ip.v4.protocol;
            bit<16> len = hdr.ip.v4.totalLen - 20;
            hdr.ip.v6.setValid();
            hdr.ip.v6.version = 6;
            hdr.ip.v6.trafficClass = 0;
            hdr.ip.v6.flowLabel = 0;
            hdr.ip.v6.payloadLen = len;
            hdr.ip.v6.nextHdr = proto;
            hdr.ip.v6.hopLimit = ttl - 1;
            hdr.ip.v6.srcAddr = 128w0xffff00000000 | (bit<128>)src;
            hdr.ip.v6.dstAddr = 128w0xffff00000000 | (bit<128>)dst;
            hdr.ethernet.etherType = 0x86dd;
            sm.egress_spec = 3;
        } else if (hdr.ip.v4.isValid()) {
            hdr.ip.v4.ttl = hdr.ip.v4.ttl - 1;
            sm.egress_spec = 1;
        } else if (hdr.ip.v6.isValid()) {
            hdr.ip.v6.hopLimit = hdr.ip.v6.hopLimit - 1;
            sm.egress_spec = 2;
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
        pkt.emit(hdr.ip);
    }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
