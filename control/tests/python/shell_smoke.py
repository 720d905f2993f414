#!/usr/bin/env python3
"""p4runtime-shell against the roceswitch P4Runtime server (see README.md)."""

import argparse
import sys

import p4runtime_sh.shell as sh
from p4runtime_sh.p4runtime import P4RuntimeWriteException


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="unix:/run/roceswitch/p4rt.sock")
    ap.add_argument("--device-id", type=int, default=1)
    ap.add_argument("--election-id", default="1,0", help="high,low")
    ap.add_argument("--table", default="ipv4_lpm")
    ap.add_argument("--field", default="dst_addr")
    ap.add_argument("--action", default="set_nexthop_id")
    ap.add_argument("--param", default="nexthop_id")
    ap.add_argument("--owned-table", default="dscp_to_priority")
    args = ap.parse_args()
    high, low = (int(x) for x in args.election_id.split(","))

    sh.setup(device_id=args.device_id, grpc_addr=args.addr, election_id=(high, low))
    try:
        version = sh.APIVersion()
        if len(version.split(".")) != 3:
            fail(f"Capabilities version {version!r} is not semver")

        def entry(prefix, nh):
            te = sh.TableEntry(args.table)(action=args.action)
            te.match[args.field] = prefix
            te.action[args.param] = str(nh)
            return te

        entry("10.0.0.0/8", 1).insert()
        got = list(sh.TableEntry(args.table).read())
        if len(got) != 1:
            fail(f"expected 1 entry after insert, read {len(got)}")

        try:
            entry("10.0.0.0/8", 2).insert()
            fail("duplicate insert succeeded")
        except P4RuntimeWriteException as e:
            if "ALREADY_EXISTS" not in str(e):
                fail(f"duplicate insert: unexpected error {e}")

        # Padded value (canonical bytestrings off): the server normalises keys.
        sh.global_options["canonical_bytestrings"] = False
        te = sh.TableEntry(args.table)
        te.match[args.field] = "10.0.0.0/8"
        te.delete()
        sh.global_options["canonical_bytestrings"] = True
        if list(sh.TableEntry(args.table).read()):
            fail("entry still present after padded delete")

        try:
            owned = sh.TableEntry(args.owned_table)
            # Any key is fine: the table-level ownership check comes first.
            field = next(iter(owned._info.match_fields)).name
            owned.match[field] = "1"
            owned.action_name = None
            owned.delete()
            fail("write to a fabric-owned table succeeded")
        except P4RuntimeWriteException as e:
            if "PERMISSION_DENIED" not in str(e):
                fail(f"fabric-owned table: unexpected error {e}")
    finally:
        sh.teardown()
    print("OK")


if __name__ == "__main__":
    main()
