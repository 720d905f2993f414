/* Parser features: header stacks (next/last), a varbit option sized from
 * lookahead, select with masks, ranges and a value set, header unions,
 * a sub-parser, verify() with a program error, and what the parser leaves
 * for ingress. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header mpls_t { bit<20> label; bit<3> tc; bit<1> bos; bit<8> ttl; }
header opt_t { bit<8> kind; bit<8> len; varbit<48> data; }
header v4_t { bit<8> tag; bit<8> valid; }  /* a field called `valid` */
header v6_t { bit<8> tag; bit<16> val; }
header_union ip_u { v4_t v4; v6_t v6; }
/* What ingress learnt, appended after the parsed headers. */
header report_t { bit<8> kind; bit<8> depth; bit<8> err; bit<8> top_ttl; }

struct headers {
    ethernet_t eth;
    mpls_t[3]  mpls;
    opt_t      opt;
    ip_u       u;
    report_t   report;
}
struct meta_t { }

error { BadOptionLength }

/* A sub-parser: the IPv6-ish member of the union. */
parser V6Parser(packet_in pkt, inout ip_u u) {
    state start {
        pkt.extract(u.v6);
        transition accept;
    }
}

parser P(packet_in pkt, out headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) custom_types;
    V6Parser() v6p;

    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etherType) {
            0x8847: parse_mpls;
            0x9000 &&& 0xff00: parse_opt;
            0xa000 .. 0xa0ff: parse_union;
            custom_types: parse_union;
            0xdead: spin;
            default: accept;
        }
    }
    state parse_mpls {
        pkt.extract(hdr.mpls.next);
        transition select(hdr.mpls.last.bos) {
            0: parse_mpls;
            1: accept;
        }
    }
    state parse_opt {
        bit<16> kind_len = pkt.lookahead<bit<16>>();
        verify(kind_len[7:0] >= 2, error.BadOptionLength);
        pkt.extract(hdr.opt, (bit<32>) (kind_len[7:0] - 2) * 8);
        transition accept;
    }
    state parse_union {
        transition select(pkt.lookahead<bit<8>>()) {
            4: parse_v4;
            6: parse_v6;
        }
    }
    /* A cycle that consumes nothing: ends in ParserTimeout. */
    state spin { transition spin; }
    state parse_v4 { pkt.extract(hdr.u.v4); transition accept; }
    state parse_v6 { v6p.apply(pkt, hdr.u); transition accept; }
}

control VC(inout headers hdr, inout meta_t meta) { apply { } }

control I(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.report.setValid();
        hdr.report.kind = 0;
        if (hdr.mpls[0].isValid()) {
            hdr.report.kind = 1;
            hdr.report.depth = (bit<8>) hdr.mpls.lastIndex + 1;
            hdr.report.top_ttl = hdr.mpls[0].ttl;
            if (hdr.mpls[1].isValid()) {
                hdr.mpls.pop_front(1);
            }
        } else if (hdr.opt.isValid()) {
            hdr.report.kind = 2;
        } else if (hdr.u.v4.isValid()) {
            hdr.report.kind = 4;
            hdr.u.v4.valid = hdr.u.v4.valid + 1;
        } else if (hdr.u.v6.isValid()) {
            hdr.report.kind = 6;
        }
        if (sm.parser_error == error.NoMatch) {
            hdr.report.err = 2;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.report.err = 1;
        } else if (sm.parser_error == error.BadOptionLength) {
            hdr.report.err = 7;
        } else if (sm.parser_error == error.StackOutOfBounds) {
            hdr.report.err = 3;
        } else if (sm.parser_error == error.ParserTimeout) {
            hdr.report.err = 5;
        }
    }
}

control E(inout headers hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.eth);
        pkt.emit(hdr.mpls);
        pkt.emit(hdr.opt);
        pkt.emit(hdr.u);
        pkt.emit(hdr.report);
    }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
