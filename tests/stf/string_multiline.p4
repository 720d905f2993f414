// A string literal runs to the first `"` not escaped by a backslash, over
// newlines too (P4_16 §6.4.3.3: "Strings start with a double quote character
// and extend to the first double quote sign which is not immediately preceded
// by an odd number of backslash characters"). Inside one, a line that starts
// with `#` is no preprocessor directive, `//` and `/*` start no comment, and
// macros are not expanded: were the `#define` below taken as a directive,
// STEP would be 5 and the packet would leave with 0x46, not 0x42.
#include <core.p4>
#include <v1model.p4>

#define STEP 1

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
    @note("first line, STEP unexpanded
#undef STEP
#define STEP 5
    // not a comment; /* nor is this
    an escaped quote \" and the last line")
    action forward() {
        sm.egress_spec = 2;
        hdr.h.a = hdr.h.a + STEP;
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
