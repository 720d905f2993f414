/* core.p4 -- the P4_16 core library for roceswitch's compiler.
 *
 * Written for this project from the P4_16 language specification
 * (v1.2.4, section 16 "The P4 core library"). It declares what every P4_16
 * program may use regardless of architecture: the built-in errors, the
 * packet_in / packet_out externs, verify, NoAction, the standard match kinds
 * and static_assert.
 */
#ifndef _CORE_P4_
#define _CORE_P4_

/* Parser errors, in the order the specification lists them. */
error {
    NoError,               /* no error */
    PacketTooShort,        /* not enough bits in the packet for extract */
    NoMatch,               /* a select expression matched no case */
    StackOutOfBounds,      /* a header stack index was out of range */
    HeaderTooShort,        /* a varbit extract asked for too many bits */
    ParserTimeout,         /* the parser ran out of time */
    ParserInvalidArgument  /* a parser operation got an invalid argument */
}

/* The packet being parsed. */
extern packet_in {
    /* Reads a fixed-size header into hdr and marks it valid. */
    void extract<T>(out T hdr);
    /* Reads a header whose single varbit field gets variableFieldSizeInBits bits. */
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /* Returns the next sizeof(T) bits without consuming them. */
    T lookahead<T>();
    /* Skips sizeInBits bits. */
    void advance(in bit<32> sizeInBits);
    /* Length of the whole packet in bytes. */
    bit<32> length();
}

/* The packet being built by the deparser. */
extern packet_out {
    /* Appends hdr when it is valid (for a struct or stack: each valid member in order). */
    void emit<T>(in T hdr);
}

/* Rejects the packet with error toSignal unless check holds (parser only). */
extern void verify(in bool check, in error toSignal);

/* The action that does nothing. */
@noWarn("unused")
action NoAction() {}

/* Match kinds every architecture understands. */
match_kind {
    exact,    /* value equals the key */
    ternary,  /* value under a mask */
    lpm       /* longest prefix */
}

/* Compile-time assertion. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  /* _CORE_P4_ */
