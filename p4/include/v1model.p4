/* v1model.p4 -- the v1model architecture as roceswitch implements it.
 *
 * Written for this project from the P4_16 specification and the public
 * description of the v1model architecture (the BMv2 simple_switch target).
 * Programs written for v1model compile unchanged against it. Differences
 * from upstream: two extra fields at the end of standard_metadata_t that
 * expose queue depth in bytes from roceswitch's traffic manager.
 */
#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include <core.p4>

/* As in p4c's v1model.p4, a program that does not pick a version gets the
 * first one; `#define V1MODEL_VERSION 20200408` before the include picks
 * PortId_t and the index-typed counter, meter and register. */
#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

/* Lets a program check which v1model it was compiled against. */
const bit<32> __v1model_version = V1MODEL_VERSION;

/* Extra table match kinds. */
match_kind {
    range,     /* low <= key <= high */
    optional,  /* exact, or wildcard */
    selector   /* inputs to an action selector's hash */
}

#if V1MODEL_VERSION >= 20200408
/* A port number, as programs written for v1model 20200408 and later name it. */
typedef bit<9> PortId_t;
#endif

/* Per-packet metadata the architecture provides. Port numbers are 9 bits. */
@metadata @name("standard_metadata")
struct standard_metadata_t {
    bit<9>  ingress_port;      /* port the packet arrived on */
    bit<9>  egress_spec;       /* set in ingress: where to send it (511 drops) */
    bit<9>  egress_port;       /* in egress: the port it leaves from */
    bit<32> instance_type;     /* normal, clone, resubmit, recirculate... */
    bit<32> packet_length;     /* bytes */
    @alias("queueing_metadata.enq_timestamp")
    bit<32> enq_timestamp;     /* microseconds, when enqueued */
    @alias("queueing_metadata.enq_qdepth")
    bit<19> enq_qdepth;        /* queue depth in packets at enqueue */
    @alias("queueing_metadata.deq_timedelta")
    bit<32> deq_timedelta;     /* microseconds spent queued */
    @alias("queueing_metadata.deq_qdepth")
    bit<19> deq_qdepth;        /* queue depth in packets at dequeue */
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48> ingress_global_timestamp;  /* microseconds */
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48> egress_global_timestamp;   /* microseconds */
    @alias("intrinsic_metadata.mcast_grp")
    bit<16> mcast_grp;         /* multicast group, 0 = unicast */
    @alias("intrinsic_metadata.egress_rid")
    bit<16> egress_rid;        /* replication id of a multicast copy */
    bit<1>  checksum_error;    /* set by verify_checksum */
    error   parser_error;      /* the parser's error, NoError if accepted */
    @alias("intrinsic_metadata.priority")
    bit<3>  priority;          /* egress queue (priority) to use */
    /* roceswitch extensions: queue depth in bytes. */
    bit<32> enq_qdepth_bytes;  /* bytes queued at enqueue */
    bit<32> deq_qdepth_bytes;  /* bytes queued at dequeue */
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/* An array of counters, indexed by the control plane and by count(). */
#if V1MODEL_VERSION >= 20200408
extern counter<I>
#else
extern counter
#endif
{
    counter(bit<32> size, CounterType type);
#if V1MODEL_VERSION >= 20200408
    void count(in I index);
#else
    void count(in bit<32> index);
#endif
}

/* One counter per entry of the table that names it in `counters =`. */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

/* An array of three-colour meters (RFC 2698). */
#if V1MODEL_VERSION >= 20200408
extern meter<I>
#else
extern meter
#endif
{
    meter(bit<32> size, MeterType type);
#if V1MODEL_VERSION >= 20200408
    void execute_meter<T>(in I index, out T result);
#else
    void execute_meter<T>(in bit<32> index, out T result);
#endif
}

/* One meter per entry of the table that names it in `meters =`. */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* An array of values the data plane can read and write. */
#if V1MODEL_VERSION >= 20200408
extern register<T, I>
#else
extern register<T>
#endif
{
    register(bit<32> size);
#if V1MODEL_VERSION >= 20200408
    @noSideEffects
    void read(out T result, in I index);
    void write(in I index, in T value);
#else
    @noSideEffects
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
#endif
}

/* Action data shared between tables through member references. */
extern action_profile {
    action_profile(bit<32> size);
}

/* A uniformly random value in lo..hi (inclusive). */
extern void random<T>(out T result, in T lo, in T hi);

/* Sends data to the control plane as a digest message. */
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

/* Drops the packet at the end of ingress (sets egress_spec to the drop port). */
@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result = base + (hash(data) mod max), computed with algo. */
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/* An action profile whose member is chosen by hashing the selector keys. */
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

/* Legacy checksum unit. */
@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

/* Sets standard_metadata.checksum_error when condition holds and the checksum of data differs. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
/* Writes the checksum of data into checksum when condition holds. */
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);
/* As verify_checksum, with the packet payload appended to data. */
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
/* As update_checksum, with the packet payload appended to data. */
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Runs ingress again on the original packet. */
@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);
/* Resubmit, keeping the user metadata fields annotated @field_list(index). */
extern void resubmit_preserving_field_list(bit<8> index);

/* Sends the deparsed packet back to the ingress parser. */
@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);
/* Recirculate, keeping the user metadata fields annotated @field_list(index). */
extern void recirculate_preserving_field_list(bit<8> index);

/* Copies the packet to the clone session's port. */
extern void clone(in CloneType type, in bit<32> session);
@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
/* Clone, keeping the user metadata fields annotated @field_list(index). */
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/* Cuts the outgoing packet to at most length bytes. */
extern void truncate(in bit<32> length);

/* Debug checks: stop the switch (assert) or assume true (assume) when check is false. */
extern void assert(in bool check);
extern void assume(in bool check);

/* Writes a message to the switch log; {} placeholders take the fields of data. */
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The programmable blocks, in pipeline order. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep);

#endif  /* _V1_MODEL_P4_ */
