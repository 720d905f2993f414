// An unstructured annotation body is a sequence of any tokens, characters
// outside P4's own tokens included (P4_16 §18.1.1; Appendix H lets an
// annotation token be UNEXPECTED_TOKEN): apostrophes, `$`, `#`, backquotes
// and nested parentheses stay inside it. Outside an annotation such a
// character is still a lexical error.
#include <core.p4>
#include <v1model.p4>

@note(It's a header: 'quoted' $dollar #hash `tick` (nested 'parens') 0xdead)
header h_t {
    bit<8> a;
}

struct headers_t {
    h_t h;
}

struct meta_t { }

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
    @doc(Sets the port: don't care what's in `a`.)
    action forward() {
        sm.egress_spec = 2;
        hdr.h.a = hdr.h.a + 1;
    }
    apply { forward(); }
}

control MyEgress(inout headers_t hdr, inout meta_t meta,
                 inout standard_metadata_t sm) { apply { } }

control MyCompute(inout headers_t hdr, inout meta_t meta) { apply { } }

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.h); }
}

V1Switch(MyParser(), MyVerify(), MyIngress(), MyEgress(), MyCompute(), MyDeparser()) main;
