/*
 * roce_switch.p4: the forwarding program of roceswitch, a RoCEv2 fabric switch.
 *
 * v1model. What the program does, in packet order:
 *   parse     Ethernet, up to two 802.1Q/802.1ad tags, IPv4 (options skipped by
 *             IHL), IPv6, UDP, TCP, and on UDP/4791 the InfiniBand transport:
 *             BTH, then RETH / AETH / ImmDt as the opcode implies, or the CNP
 *             payload; RoCE v1 (EtherType 0x8915): GRH, then the same. A
 *             header shorter than it claims is a parser error.
 *   ingress   drop+count parser errors; classify into one of 8 priorities by
 *             DSCP or PCP (trust is per ingress port); RoCE security (source
 *             allowlist, P_Key partitions; off until configured); route IPv4/IPv6 by LPM
 *             to a next hop or an ECMP group (action selector over a flow
 *             hash of the 5-tuple including the UDP source port, the RoCEv2
 *             entropy, mixed with a per-switch seed against polarization);
 *             decrement TTL / hop limit; L2 exact forwarding for frames not
 *             addressed to the router, to one port or to a multicast group
 *             (broadcast/multicast MACs, or flooding if the controller makes
 *             it the default); ternary ACL that can also mirror to a clone
 *             session; punt to the CPU port.
 *   PRE       multicast groups and clone sessions are P4Runtime
 *             PacketReplicationEngineEntry objects (or the STF/CLI commands).
 *   egress    a replica never leaves by the port it arrived on; RED/ECN
 *             marking on the traffic manager's queue depth in bytes,
 *             per (egress port, priority); CE only on ECT packets; the RoCE
 *             ICRC masks ToS/TTL/checksum, so marking never breaks it.
 *
 * The traffic manager between ingress and egress is fixed function (Rust):
 * it reads standard_metadata.priority as the egress queue and reports
 * deq_qdepth_bytes (a roceswitch extension of standard_metadata_t).
 *
 * Tables owned by the fabric QoS service (not by P4Runtime clients) carry
 * @roceswitch_owner("fabric").
 */
#include <core.p4>
#include <v1model.p4>

const bit<9>  CPU_PORT        = 510;
const bit<16> ETHERTYPE_IPV4  = 0x0800;
const bit<16> ETHERTYPE_IPV6  = 0x86dd;
const bit<16> ETHERTYPE_VLAN  = 0x8100;
const bit<16> ETHERTYPE_QINQ  = 0x88a8;
const bit<8>  PROTO_TCP       = 6;
const bit<8>  PROTO_UDP       = 17;
const bit<16> UDP_PORT_ROCEV2 = 4791;
const bit<16> ETHERTYPE_ROCEV1 = 0x8915;
/* GRH next header: a BTH follows (IBTA Vol 1, 8.3). */
const bit<8>  GRH_NXTHDR_BTH  = 0x1b;

/* Indices of the drop_reason counter. */
const bit<32> DROP_PARSER_ERROR   = 0;
const bit<32> DROP_CHECKSUM       = 1;
const bit<32> DROP_TTL_EXPIRED    = 2;
const bit<32> DROP_NO_ROUTE       = 3;
const bit<32> DROP_ACL            = 4;
const bit<32> DROP_UNKNOWN_L2_DST = 5;
const bit<32> DROP_EGRESS_INVALID = 6;
/* egress_drop_reason only: a replica for the port the packet came in by. */
const bit<32> DROP_REPLICA_TO_SOURCE = 7;
const bit<32> DROP_REASONS        = 8;

/* RoCE security (fabric `security`): indices of the roce_security_drops
 * counters, which are indexed by port * SEC_DROP_REASONS + reason (the
 * ingress port for the first three, the egress port for the last). */
const bit<32> SEC_DROP_ROCEV2_SOURCE = 0;
const bit<32> SEC_DROP_ROCEV1_SOURCE = 1;
const bit<32> SEC_DROP_PKEY_INGRESS  = 2;
const bit<32> SEC_DROP_PKEY_EGRESS   = 3;
const bit<32> SEC_DROP_REASONS       = 4;
const bit<32> SEC_DROP_CELLS         = 2048;

/* Per-(port, priority) counters are indexed by port * 8 + priority. */
const bit<32> PORT_PRIO_CELLS = 4096;

/* standard_metadata.instance_type of a multicast replica (bmv2). */
const bit<32> INSTANCE_TYPE_REPLICATION = 5;

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<16> nexthop_id_t;

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header vlan_tag_t {
    bit<3>  pcp;
    bit<1>  dei;
    bit<12> vid;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

/* IHL 6..15 adds 4..40 bytes of options. */
header ipv4_options_t {
    varbit<320> options;
}

header ipv6_t {
    bit<4>      version;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<20>     flow_label;
    bit<16>     payload_len;
    bit<8>      next_hdr;
    bit<8>      hop_limit;
    ipv6_addr_t src_addr;
    ipv6_addr_t dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

header tcp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

/* InfiniBand Base Transport Header (IBTA Vol 1, 9.2). */
header bth_t {
    bit<8>  opcode;
    bit<1>  solicited;
    bit<1>  migreq;
    bit<2>  pad_count;
    bit<4>  version;
    bit<16> pkey;
    bit<1>  fecn;
    bit<1>  becn;
    bit<6>  resv6;
    bit<24> dest_qp;
    bit<1>  ack_req;
    bit<7>  resv7;
    bit<24> psn;
}

/* InfiniBand Global Route Header: what RoCE v1 carries after the Ethernet
 * header (IBTA Vol 1, 8.3; Annex A16), in IPv6's layout with GIDs. */
header grh_t {
    bit<4>   ip_ver;
    bit<8>   tclass;
    bit<20>  flow_label;
    bit<16>  pay_len;
    bit<8>   nxt_hdr;
    bit<8>   hop_limit;
    bit<128> sgid;
    bit<128> dgid;
}

/* RDMA Extended Transport Header: WRITE first/only, READ request. */
header reth_t {
    bit<64> virtual_addr;
    bit<32> rkey;
    bit<32> dma_len;
}

/* ACK Extended Transport Header: ACK and READ responses. */
header aeth_t {
    bit<8>  syndrome;
    bit<24> msn;
}

/* Immediate data. */
header immdt_t {
    bit<32> data;
}

/* The 16 reserved bytes a RoCEv2 CNP carries after its BTH. */
header cnp_t {
    bit<128> reserved;
}

struct headers_t {
    packet_out_t   packet_out;
    packet_in_t    packet_in;
    ethernet_t     ethernet;
    vlan_tag_t[2]  vlan;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
    ipv6_t         ipv6;
    udp_t          udp;
    tcp_t          tcp;
    bth_t          bth;
    reth_t         reth;
    aeth_t         aeth;
    immdt_t        immdt;
    cnp_t          cnp;
    /* RoCE v1 only. */
    grh_t          grh;
}

struct metadata_t {
    bit<3>       priority;
    bit<1>       trust_pcp;
    bit<12>      vid;
    bit<6>       dscp;
    bit<8>       ip_proto;
    bit<128>     flow_src;
    bit<128>     flow_dst;
    bit<16>      l4_src_port;
    bit<16>      l4_dst_port;
    /* The BTH destination QP of RoCE (0 otherwise), an ACL key. */
    bit<24>      roce_dest_qp;
    bool         routed;
    nexthop_id_t nexthop_id;
    bit<32>      ecmp_seed;
    bit<32>      ecmp_hash;
    bit<32>      red_kmin;
    bit<32>      red_kmax;
    bit<16>      red_pmax;
    bool         red_enabled;
    /* RoCE security: 1 = v1, 2 = v2 (0: not RoCE); the source GID (an IPv4
     * source as the IPv4-mapped GID ::ffff:a.b.c.d); a check dropped it. */
    bit<2>       roce_version;
    bit<128>     roce_src_gid;
    bool         roce_denied;
}

error {
    IPv4HeaderTooShort,
    IPv4BadVersion
}

/*************************************************************************
 * Parser
 *************************************************************************/

parser RoceParser(packet_in pkt,
                  out headers_t hdr,
                  inout metadata_t meta,
                  inout standard_metadata_t std_meta) {

    state start {
        transition select(std_meta.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_VLAN: parse_vlan;
            ETHERTYPE_QINQ: parse_vlan;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            ETHERTYPE_ROCEV1: parse_grh;
            default: accept;
        }
    }

    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        transition select(hdr.vlan.last.ether_type) {
            ETHERTYPE_VLAN: parse_vlan;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            ETHERTYPE_ROCEV1: parse_grh;
            default: accept;
        }
    }

    /* RoCE v1: GRH, then the same BTH as v2. */
    state parse_grh {
        pkt.extract(hdr.grh);
        transition select(hdr.grh.nxt_hdr) {
            GRH_NXTHDR_BTH: parse_bth;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.IPv4BadVersion);
        verify(hdr.ipv4.ihl >= 5, error.IPv4HeaderTooShort);
        meta.dscp = hdr.ipv4.dscp;
        meta.ip_proto = hdr.ipv4.protocol;
        meta.flow_src = (bit<128>) hdr.ipv4.src_addr;
        meta.flow_dst = (bit<128>) hdr.ipv4.dst_addr;
        transition select(hdr.ipv4.ihl) {
            5: parse_ipv4_l4;
            default: parse_ipv4_options;
        }
    }

    state parse_ipv4_options {
        pkt.extract(hdr.ipv4_options, (bit<32>) (((bit<16>) hdr.ipv4.ihl - 5) * 32));
        transition parse_ipv4_l4;
    }

    state parse_ipv4_l4 {
        /* Only first fragments carry the L4 header. */
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, PROTO_UDP): parse_udp;
            (0, PROTO_TCP): parse_tcp;
            default: accept;
        }
    }

    state parse_ipv6 {
        pkt.extract(hdr.ipv6);
        meta.dscp = hdr.ipv6.dscp;
        meta.ip_proto = hdr.ipv6.next_hdr;
        meta.flow_src = hdr.ipv6.src_addr;
        meta.flow_dst = hdr.ipv6.dst_addr;
        transition select(hdr.ipv6.next_hdr) {
            PROTO_UDP: parse_udp;
            PROTO_TCP: parse_tcp;
            default: accept;
        }
    }

    state parse_tcp {
        pkt.extract(hdr.tcp);
        meta.l4_src_port = hdr.tcp.src_port;
        meta.l4_dst_port = hdr.tcp.dst_port;
        transition accept;
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        meta.l4_src_port = hdr.udp.src_port;
        meta.l4_dst_port = hdr.udp.dst_port;
        transition select(hdr.udp.dst_port) {
            UDP_PORT_ROCEV2: parse_bth;
            default: accept;
        }
    }

    state parse_bth {
        pkt.extract(hdr.bth);
        /* The low 5 bits of the opcode say which extended headers follow
         * (IBTA Vol 1, table 38); the top 3 bits the transport (RC/UC/RD/UD).
         * 0x81 is the RoCEv2 CNP. */
        transition select(hdr.bth.opcode) {
            0x81: parse_cnp;
            0x06 &&& 0x1f: parse_reth;          /* RDMA WRITE First */
            0x0a &&& 0x1f: parse_reth;          /* RDMA WRITE Only */
            0x0b &&& 0x1f: parse_reth_immdt;    /* RDMA WRITE Only with Immediate */
            0x0c &&& 0x1f: parse_reth;          /* RDMA READ Request */
            0x03 &&& 0x1f: parse_immdt;         /* SEND Last with Immediate */
            0x05 &&& 0x1f: parse_immdt;         /* SEND Only with Immediate */
            0x09 &&& 0x1f: parse_immdt;         /* RDMA WRITE Last with Immediate */
            0x0d &&& 0x1f: parse_aeth;          /* RDMA READ Response First */
            0x0f &&& 0x1f: parse_aeth;          /* RDMA READ Response Last */
            0x10 &&& 0x1f: parse_aeth;          /* RDMA READ Response Only */
            0x11 &&& 0x1f: parse_aeth;          /* Acknowledge */
            0x12 &&& 0x1f: parse_aeth;          /* Atomic Acknowledge */
            default: accept;
        }
    }

    state parse_reth {
        pkt.extract(hdr.reth);
        transition accept;
    }

    state parse_reth_immdt {
        pkt.extract(hdr.reth);
        pkt.extract(hdr.immdt);
        transition accept;
    }

    state parse_immdt {
        pkt.extract(hdr.immdt);
        transition accept;
    }

    state parse_aeth {
        pkt.extract(hdr.aeth);
        transition accept;
    }

    state parse_cnp {
        pkt.extract(hdr.cnp);
        transition accept;
    }
}

/*************************************************************************
 * Checksums
 *************************************************************************/

control RoceVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.options },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control RoceComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.options },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

/*************************************************************************
 * Ingress
 *************************************************************************/

control RoceIngress(inout headers_t hdr,
                    inout metadata_t meta,
                    inout standard_metadata_t std_meta) {

    counter(DROP_REASONS, CounterType.packets) drop_reason;
    counter(PORT_PRIO_CELLS, CounterType.packets_and_bytes) rx_port_prio;

    action count_drop(bit<32> reason) {
        drop_reason.count(reason);
        mark_to_drop(std_meta);
    }

    /* ---- classification ---- */

    action trust_dscp() { meta.trust_pcp = 0; }
    action trust_pcp() { meta.trust_pcp = 1; }

    @roceswitch_owner("fabric")
    table port_trust {
        key = { std_meta.ingress_port: exact @name("ingress_port"); }
        actions = { trust_dscp; trust_pcp; }
        default_action = trust_dscp();
        size = 512;
    }

    action set_priority(bit<3> priority) { meta.priority = priority; }

    @roceswitch_owner("fabric")
    table dscp_to_priority {
        key = { meta.dscp: exact @name("dscp"); }
        actions = { set_priority; }
        default_action = set_priority(0);
        size = 64;
        /* Reference defaults (R-MAP-2): RoCE DSCP 26 on priority 3, CNP DSCP 48 on 6. */
        entries = {
            26 : set_priority(3);
            48 : set_priority(6);
        }
    }

    @roceswitch_owner("fabric")
    table pcp_to_priority {
        key = { hdr.vlan[0].pcp: exact @name("pcp"); }
        actions = { set_priority; }
        default_action = set_priority(0);
        size = 8;
        entries = {
            0 : set_priority(0);
            1 : set_priority(1);
            2 : set_priority(2);
            3 : set_priority(3);
            4 : set_priority(4);
            5 : set_priority(5);
            6 : set_priority(6);
            7 : set_priority(7);
        }
    }

    /* ---- L3 ---- */

    action set_routed() { meta.routed = true; }

    table my_station {
        key = { hdr.ethernet.dst_addr: exact @name("dst_mac"); }
        actions = { set_routed; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    action set_nexthop_id(nexthop_id_t nexthop_id) {
        meta.nexthop_id = nexthop_id;
    }

    action no_route() {
        count_drop(DROP_NO_ROUTE);
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm @name("dst_addr"); }
        actions = { set_nexthop_id; no_route; }
        default_action = no_route();
        size = 16384;
    }

    table ipv6_lpm {
        key = { hdr.ipv6.dst_addr: lpm @name("dst_addr"); }
        actions = { set_nexthop_id; no_route; }
        default_action = no_route();
        size = 8192;
    }

    action set_nexthop(bit<9> port, mac_addr_t src_mac, mac_addr_t dst_mac) {
        std_meta.egress_spec = port;
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
    }

    /* The ECMP hash seed of this switch. If every tier of a Clos fabric
     * hashed a flow with the same function, each tier would pick "the same"
     * uplink and half the paths would idle (hash polarization); like the
     * `ecmp hash seed` of other switches, each switch gets its own seed. It
     * is mixed in by a multiply, not hashed along with the flow: a CRC is
     * linear, so a seed inside the CRC input would flip the same hash bits
     * for every flow and keep the tiers correlated. */
    action set_ecmp_seed(bit<32> seed) {
        meta.ecmp_seed = seed;
    }

    table ecmp_hash_seed {
        actions = { set_ecmp_seed; }
        default_action = set_ecmp_seed(0);
        size = 1;
    }

    /* The flow hash: the 5-tuple, UDP source port included (RoCEv2 puts its
     * flow entropy there), CRC-32, then the seed, mixed by a multiply by
     * 2^64/phi whose high half carries every input bit. */
    action compute_ecmp_hash() {
        bit<32> crc;
        hash(crc, HashAlgorithm.crc32, 32w0,
             { meta.flow_src, meta.flow_dst, meta.ip_proto,
               meta.l4_src_port, meta.l4_dst_port },
             64w0x100000000);
        bit<64> mixed = ((bit<64>) (crc ^ meta.ecmp_seed)) * 64w0x9e3779b97f4a7c15;
        meta.ecmp_hash = mixed[63:32];
    }

    /* One member per next hop; a route to several equal-cost next hops
     * points at a group, which picks a member by the flow hash. */
    table nexthop {
        key = {
            meta.nexthop_id: exact @name("nexthop_id");
            meta.ecmp_hash: selector;
        }
        actions = { set_nexthop; no_route; }
        default_action = no_route();
        implementation = action_selector(HashAlgorithm.crc32, 4096, 16);
        size = 4096;
    }

    /* ---- L2 ---- */

    action l2_forward(bit<9> port) { std_meta.egress_spec = port; }

    action l2_unknown() {
        /* Never flood by default: an unknown destination on a lossless
         * fabric is how PFC deadlocks start (R-DL-1). */
        count_drop(DROP_UNKNOWN_L2_DST);
    }

    /* Replicate to every port of a multicast group (P4Runtime
     * MulticastGroupEntry): an entry for ff:ff:ff:ff:ff:ff or a multicast
     * MAC in a VLAN, or the default action to flood unknown unicast. */
    action set_mcast_grp(bit<16> mcast_grp) {
        std_meta.mcast_grp = mcast_grp;
    }

    table l2_fwd {
        key = {
            meta.vid: exact @name("vid");
            hdr.ethernet.dst_addr: exact @name("dst_mac");
        }
        actions = { l2_forward; l2_unknown; set_mcast_grp; }
        default_action = l2_unknown();
        size = 8192;
    }

    /* ---- RoCE security (fabric-owned, fabric `security`) ----
     *
     * Source allowlist. On a port the fabric lists allowed sources for,
     * RoCE (v2: UDP 4791 with a BTH; v1: EtherType 0x8915, GRH, BTH) is
     * admitted only from a listed source GID prefix (IPv4 sources match as
     * IPv4-mapped GIDs) or, for v1, a listed source MAC, each optionally
     * only in one VLAN; everything else RoCE on that port is dropped and
     * counted (SEC_DROP_ROCEV{1,2}_SOURCE). The plan writes the allow
     * entries above one lowest-priority catch-all deny per filtered port,
     * so a port without entries misses the table: not filtered. Non-RoCE
     * traffic (other UDP ports, TCP, plain L2) is never looked up.
     *
     * P_Key partitions. On a port the fabric gives partitions, the BTH
     * P_Key of RoCE arriving must name one of them, with no more than the
     * port's membership (a limited port may not send a full-member P_Key);
     * on the way out (egress pkey_egress), the IBTA P_Key match against the
     * egress port's partitions: same low 15 bits, and at least one of the
     * packet's and the port's membership full (the top bit, 1 = full), so a
     * limited member reaches only full members, two limited members never
     * (IBTA Vol 1, 10.9 "Partitioning"; restated in IETF 50 InfiniBand
     * partitioning slides and Oracle Exalogic "Understand Partition Keys"). */

    counter(SEC_DROP_CELLS, CounterType.packets) roce_security_drops;

    action roce_src_permit() { }

    action roce_src_deny() {
        if (meta.roce_version == 1) {
            roce_security_drops.count(((bit<32>) std_meta.ingress_port) * SEC_DROP_REASONS
                                      + SEC_DROP_ROCEV1_SOURCE);
        } else {
            roce_security_drops.count(((bit<32>) std_meta.ingress_port) * SEC_DROP_REASONS
                                      + SEC_DROP_ROCEV2_SOURCE);
        }
        meta.roce_denied = true;
        mark_to_drop(std_meta);
    }

    @roceswitch_owner("fabric")
    table roce_src_allow {
        key = {
            std_meta.ingress_port: exact @name("ingress_port");
            meta.roce_version: ternary @name("roce_version");
            meta.vid: ternary @name("vid");
            hdr.ethernet.src_addr: ternary @name("src_mac");
            meta.roce_src_gid: ternary @name("src_gid");
        }
        actions = { roce_src_permit; roce_src_deny; }
        default_action = roce_src_permit();
        size = 4096;
    }

    action pkey_permit() { }

    action pkey_deny() {
        roce_security_drops.count(((bit<32>) std_meta.ingress_port) * SEC_DROP_REASONS
                                  + SEC_DROP_PKEY_INGRESS);
        meta.roce_denied = true;
        mark_to_drop(std_meta);
    }

    @roceswitch_owner("fabric")
    table pkey_ingress {
        key = {
            std_meta.ingress_port: exact @name("ingress_port");
            hdr.bth.pkey: ternary @name("pkey");
        }
        actions = { pkey_permit; pkey_deny; }
        default_action = pkey_permit();
        size = 4096;
    }

    /* ---- ACL and punt ---- */

    action acl_deny() { count_drop(DROP_ACL); }

    action punt_to_cpu() {
        std_meta.egress_spec = CPU_PORT;
        std_meta.mcast_grp = 0;
    }

    action acl_permit() { }

    /* Permit, and send a copy of the packet as it arrived to a clone
     * session (P4Runtime CloneSessionEntry: port, class of service,
     * truncation): port mirroring. */
    action acl_mirror(bit<32> session) {
        clone(CloneType.I2E, session);
    }

    /* Fault injection, a flaky link in a box: drop one in every `n`
     * packets the entry matches (e.g. of one RoCE QP, key dest_qp), counted
     * as DROP_ACL, to show what loss does to RC: go-back-N, and "transport
     * retry counter exceeded" when it comes too often. `cell` (0..1023) is
     * the entry's own count in acl_fault_seen; n = 1 drops every packet. */
    register<bit<32>>(1024) acl_fault_seen;

    action acl_drop_one_in(bit<32> n, bit<32> cell) {
        bit<32> seen;
        acl_fault_seen.read(seen, cell);
        seen = seen + 1;
        if (seen >= n) {
            seen = 0;
            drop_reason.count(DROP_ACL);
            mark_to_drop(std_meta);
        }
        acl_fault_seen.write(cell, seen);
    }

    table acl {
        key = {
            std_meta.ingress_port: ternary @name("ingress_port");
            hdr.ethernet.ether_type: ternary @name("ether_type");
            meta.flow_src: ternary @name("src_addr");
            meta.flow_dst: ternary @name("dst_addr");
            meta.ip_proto: ternary @name("ip_proto");
            meta.l4_src_port: range @name("l4_src_port");
            meta.l4_dst_port: range @name("l4_dst_port");
            meta.dscp: ternary @name("dscp");
            meta.roce_dest_qp: ternary @name("dest_qp");
        }
        actions = { acl_permit; acl_deny; punt_to_cpu; acl_mirror; acl_drop_one_in; }
        default_action = acl_permit();
        size = 1024;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            /* From the controller: send as told, no lookups. */
            std_meta.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        if (std_meta.parser_error != error.NoError) {
            count_drop(DROP_PARSER_ERROR);
            exit;
        }
        if (std_meta.checksum_error == 1) {
            count_drop(DROP_CHECKSUM);
            exit;
        }

        port_trust.apply();
        /* A tagged frame without IP (RoCE v1, EtherType 0x8915, or any
         * other L2 traffic) has no DSCP: its PCP classifies it whatever the
         * port trusts, as lossless NICs mark RoCE v1 by PCP alone. */
        bool has_ip = hdr.ipv4.isValid() || hdr.ipv6.isValid();
        if (hdr.vlan[0].isValid() && (meta.trust_pcp == 1 || !has_ip)) {
            pcp_to_priority.apply();
        } else if (has_ip) {
            dscp_to_priority.apply();
        } else {
            meta.priority = 0;
        }
        std_meta.priority = meta.priority;
        rx_port_prio.count(((bit<32>) std_meta.ingress_port) * 8 + (bit<32>) meta.priority);

        if (hdr.vlan[0].isValid()) {
            meta.vid = hdr.vlan[0].vid;
        }

        /* RoCE security (see its tables): before anything forwards. */
        if (hdr.bth.isValid()) {
            if (hdr.grh.isValid()) {
                meta.roce_version = 1;
                meta.roce_src_gid = hdr.grh.sgid;
            } else if (hdr.ipv4.isValid()) {
                meta.roce_version = 2;
                meta.roce_src_gid = 128w0xffff00000000 | (bit<128>) hdr.ipv4.src_addr;
            } else {
                meta.roce_version = 2;
                meta.roce_src_gid = hdr.ipv6.src_addr;
            }
            roce_src_allow.apply();
            if (meta.roce_denied) {
                exit;
            }
            pkey_ingress.apply();
            if (meta.roce_denied) {
                exit;
            }
        }

        my_station.apply();
        if (meta.routed) {
            ecmp_hash_seed.apply();
            compute_ecmp_hash();
        }
        if (meta.routed && hdr.ipv4.isValid()) {
            if (hdr.ipv4.ttl <= 1) {
                count_drop(DROP_TTL_EXPIRED);
                exit;
            }
            if (ipv4_lpm.apply().hit) {
                if (nexthop.apply().hit) {
                    hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                }
            }
        } else if (meta.routed && hdr.ipv6.isValid()) {
            if (hdr.ipv6.hop_limit <= 1) {
                count_drop(DROP_TTL_EXPIRED);
                exit;
            }
            if (ipv6_lpm.apply().hit) {
                if (nexthop.apply().hit) {
                    hdr.ipv6.hop_limit = hdr.ipv6.hop_limit - 1;
                }
            }
        } else {
            l2_fwd.apply();
        }

        if (hdr.bth.isValid()) {
            meta.roce_dest_qp = hdr.bth.dest_qp;
        }
        acl.apply();
    }
}

/*************************************************************************
 * Egress
 *************************************************************************/

control RoceEgress(inout headers_t hdr,
                   inout metadata_t meta,
                   inout standard_metadata_t std_meta) {

    counter(PORT_PRIO_CELLS, CounterType.packets_and_bytes) tx_port_prio;
    counter(PORT_PRIO_CELLS, CounterType.packets) ecn_marked;
    counter(DROP_REASONS, CounterType.packets) egress_drop_reason;
    /* RoCE security drops at egress (SEC_DROP_PKEY_EGRESS), indexed like
     * the ingress roce_security_drops by the egress port. */
    counter(SEC_DROP_CELLS, CounterType.packets) roce_security_egress_drops;
    action pkey_egress_permit() { }

    action pkey_egress_deny() {
        roce_security_egress_drops.count(((bit<32>) std_meta.egress_port) * SEC_DROP_REASONS
                                         + SEC_DROP_PKEY_EGRESS);
        meta.roce_denied = true;
        mark_to_drop(std_meta);
    }

    /* P_Key partitions of the egress port (see RoceIngress's RoCE security
     * block): the IBTA match of the packet's P_Key against them. */
    @roceswitch_owner("fabric")
    table pkey_egress {
        key = {
            std_meta.egress_port: exact @name("egress_port");
            hdr.bth.pkey: ternary @name("pkey");
        }
        actions = { pkey_egress_permit; pkey_egress_deny; }
        default_action = pkey_egress_permit();
        size = 4096;
    }

    action set_red(bit<32> kmin_bytes, bit<32> kmax_bytes, bit<16> pmax) {
        meta.red_enabled = true;
        meta.red_kmin = kmin_bytes;
        meta.red_kmax = kmax_bytes;
        meta.red_pmax = pmax;
    }

    action red_off() { meta.red_enabled = false; }

    /* Kmin/Kmax in bytes of queue depth; pmax scaled so 65535 = 100 %. */
    @roceswitch_owner("fabric")
    table ecn_red {
        key = {
            std_meta.egress_port: exact @name("egress_port");
            std_meta.priority: exact @name("priority");
        }
        actions = { set_red; red_off; }
        default_action = red_off();
        size = 4096;
    }

    action mark_ce() {
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.ecn = 3;
        } else {
            hdr.ipv6.ecn = 3;
        }
        ecn_marked.count(((bit<32>) std_meta.egress_port) * 8 + (bit<32>) std_meta.priority);
    }

    apply {
        if (std_meta.instance_type == INSTANCE_TYPE_REPLICATION &&
            std_meta.egress_port == std_meta.ingress_port) {
            egress_drop_reason.count(DROP_REPLICA_TO_SOURCE);
            mark_to_drop(std_meta);
            exit;
        }
        if (std_meta.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = std_meta.ingress_port;
            hdr.packet_in._pad = 0;
            exit;
        }

        if (hdr.bth.isValid()) {
            pkey_egress.apply();
            if (meta.roce_denied) {
                exit;
            }
        }

        tx_port_prio.count(((bit<32>) std_meta.egress_port) * 8 + (bit<32>) std_meta.priority);

        bit<2> ecn = 0;
        if (hdr.ipv4.isValid()) {
            ecn = hdr.ipv4.ecn;
        } else if (hdr.ipv6.isValid()) {
            ecn = hdr.ipv6.ecn;
        }
        /* RFC 3168: only ECT(0)/ECT(1) may become CE; CE stays CE; Not-ECT is
         * never marked (and lossless queues never drop it either). */
        if (ecn == 1 || ecn == 2) {
            ecn_red.apply();
            if (meta.red_enabled) {
                bit<64> q = (bit<64>) std_meta.deq_qdepth_bytes;
                bit<64> kmin = (bit<64>) meta.red_kmin;
                bit<64> kmax = (bit<64>) meta.red_kmax;
                if (q > kmax) {
                    mark_ce();
                } else if (q > kmin) {
                    /* Mark with p = pmax * (q - kmin) / (kmax - kmin),
                     * i.e. when r * (kmax - kmin) < pmax * (q - kmin)
                     * for r uniform in [0, 65535]. */
                    bit<64> r;
                    random(r, 0, 65535);
                    if (r * (kmax - kmin) < ((bit<64>) meta.red_pmax) * (q - kmin)) {
                        mark_ce();
                    }
                }
            }
        }
    }
}

/*************************************************************************
 * Deparser
 *************************************************************************/

control RoceDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.vlan);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
        pkt.emit(hdr.ipv6);
        pkt.emit(hdr.grh);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tcp);
        pkt.emit(hdr.bth);
        pkt.emit(hdr.reth);
        pkt.emit(hdr.aeth);
        pkt.emit(hdr.immdt);
        pkt.emit(hdr.cnp);
    }
}

V1Switch(RoceParser(),
         RoceVerifyChecksum(),
         RoceIngress(),
         RoceEgress(),
         RoceComputeChecksum(),
         RoceDeparser()) main;
