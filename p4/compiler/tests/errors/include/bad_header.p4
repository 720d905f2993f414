/* A header with a missing `;`. */
header ethernet_t {
    bit<48> dst;
    bit<48> src
    bit<16> etherType;
}
