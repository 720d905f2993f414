/* Everything else the grammar allows that real v1model programs use:
 * value sets, header unions, varbit options, nested controls, switch on
 * action_run with fall-through, serializable enums, packet-in/out headers,
 * abstract methods, generic structs, literals of every shape. */
#include <core.p4>
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

#ifndef CPU_PORT
#define CPU_PORT 9w255
#endif
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#if V1MODEL_VERSION < 20200408 || !defined(V1MODEL_VERSION)
#error "needs a recent v1model"
#endif

enum bit<16> EtherType {
    IPV4 = 0x0800,
    ARP  = 0x0806,
    VLAN = 0x8100
}
enum Color { GREEN, YELLOW, RED }

error { BadOptions, UnknownVersion }
match_kind { my_kind }

type bit<32> FlowId_t;
typedef tuple<bit<8>, bool> pair_t;

@controller_header("packet_in")
header packet_in_header_t {
    bit<9> ingress_port;
    @padding bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_header_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t { bit<48> dst; bit<48> src; EtherType type; }
header ipv4_base_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id;
    bit<3> flags; bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum;
    bit<32> src; bit<32> dst;
}
header ipv4_options_t { varbit<320> options; }
header ipv6_t { bit<4> version; bit<8> tc; bit<20> fl; bit<16> len; bit<8> nh; bit<8> hl; bit<128> src; bit<128> dst; }
header_union ip_t { ipv4_base_t v4; ipv6_t v6; }

struct pair<T> { T first; T second; }

struct metadata_t {
    @field_list(1) bit<9> ingress_port;
    @field_list(1, 2) FlowId_t flow;
    pair<bit<8>> pr;
    Color color;
    bit<16> l4_len;
}

struct headers_t {
    packet_out_header_t packet_out;
    packet_in_header_t packet_in;
    ethernet_t ethernet;
    ip_t ip;
    ipv4_options_t options;
}

extern Hasher<O> {
    Hasher(HashAlgorithm algo);
    O get<D>(in D data);
    abstract void on_hash(in O value);
}

extern bit<16> my_extern_fn<T>(in T data, @optional in bool flag);

bit<16> max16(in bit<16> a, in bit<16> b) {
    return MAX(a, b);
}

parser MainParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    @name(".custom_ports") value_set<bit<9>>(4) custom_ports;
    value_set<tuple<bit<16>, bit<8>>>(8) pairs;
    bit<32> optlen = 0;

    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            custom_ports: parse_ethernet;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.type) {
            EtherType.IPV4: parse_ipv4;
            0x86DD: parse_ipv6;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ip.v4);
        verify(hdr.ip.v4.version == 4w4, error.UnknownVersion);
        optlen = ((bit<32>) hdr.ip.v4.ihl - 5) * 32;
        transition select(hdr.ip.v4.ihl) {
            5: accept;
            6 .. 15: parse_options;
            default: reject;
        }
    }
    state parse_options {
        pkt.extract(hdr.options, optlen);
        transition accept;
    }
    state parse_ipv6 {
        pkt.extract(hdr.ip.v6);
        pkt.advance(32w0);
        transition select(hdr.ip.v6.nh, pkt.lookahead<bit<8>>()) {
            pairs: accept;
            (8w6, _): accept;
            (17, 0 .. 7): accept;
            (_, default): accept;
        }
    }
}

control Counting(inout metadata_t meta)(bit<32> size) {
    counter(size, CounterType.packets) c;
    apply { c.count((bit<32>) meta.ingress_port); }
}

control VerifyNothing(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MainIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    Counting(32w64) counting;
    Hasher<bit<16>>(HashAlgorithm.crc16) hasher = {
        void on_hash(in bit<16> value) {
            this.get<bit<8>>(8w1);
        }
    };
    const bit<8> LIMIT = 8w0b1010_1010;
    bit<16> scratch = 16s-3 == 16s-3 ? 16w0 : 16w0o17;

    @name("forward") @id(0x01000010)
    action fwd(@name("port") bit<9> p) { standard_metadata.egress_spec = p; }
    @hidden action to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        clone_preserving_field_list(CloneType.I2E, 32w100, 1);
        log_msg("to cpu from {}", { standard_metadata.ingress_port });
        log_msg("plain");
    }
    action set_color(Color c) { meta.color = c; }
    action drop() { mark_to_drop(standard_metadata); exit; }

    table route {
        key = {
            hdr.ethernet.dst : exact @name("dmac");
            hdr.ip.v4.dst    : lpm;
        }
        actions = { fwd; to_cpu; drop; set_color; }
        default_action = drop();
        @my_custom_prop("x") my_property = 42;
    }

    apply {
        meta.ingress_port = standard_metadata.ingress_port;
        counting.apply(meta);
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        switch (route.apply().action_run) {
            fwd:
            set_color: {
                scratch = scratch |+| 16w1;
            }
            to_cpu: { }
            default: { meta.pr = { first = 8w1, second = 8w2 }; }
        }
        switch (meta.color) {
            Color.GREEN: { }
            Color.RED: { drop(); }
        }
        pair_t pt = { 8w1, true };
        bit<32> wide = 16w1 ++ scratch;
        bit<8> low = wide[7:0];
        bit<4> nib = low[7:4] ^ LIMIT[3:0];
        int<8> s = -8s5;
        bool b = !(s < 0) && (nib != 0 || low >= 8w3) && (bit<8>) s > LIMIT;
        meta.l4_len = max16(hdr.ip.v4.len, 16w20) - ((bit<16>) hdr.ip.v4.ihl << 2);
        hdr.ip.v4.tos = (b ? 8w1 : 8w0) & 0xFC | (bit<8>) (wide >> 30) % 4;
        meta.flow = (FlowId_t) wide;
        hdr.ethernet.type = (EtherType) 16w0x0800;
        if (hdr.ip.isValid()) { ; }
        {
            @atomic { scratch = ~scratch; }
        }
        .NoAction();
        my_extern_fn(data = scratch, flag = true);
        resubmit_preserving_field_list(1);
    }
}

control MainEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == 1) {
            truncate(64);
        }
        assert(standard_metadata.egress_port != 511);
        assume(true);
    }
}

control ComputeNothing(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MainDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ip);
        pkt.emit(hdr.options);
    }
}

@pkginfo(name = "misc", version = "1.0")
V1Switch<headers_t, metadata_t>(MainParser(), VerifyNothing(), MainIngress(),
         MainEgress(), ComputeNothing(), MainDeparser()) main;
