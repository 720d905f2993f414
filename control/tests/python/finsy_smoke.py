#!/usr/bin/env python3
"""finsy against the roceswitch P4Runtime server (see README.md)."""

import argparse
import sys

import finsy as fy


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


async def run(args):
    opts = fy.SwitchOptions(device_id=args.device_id, initial_election_id=args.election_id)
    async with fy.Switch("roceswitch", args.addr, opts) as sw:
        if not sw.is_primary:
            fail("not primary")
        print("pipeline:", sw.p4info.name, sw.p4info.arch)

        await sw.delete_all()

        def entry(prefix, nh):
            return fy.P4TableEntry(
                args.table,
                match=fy.P4TableMatch({args.field: prefix}),
                action=fy.P4TableAction(args.action, **{args.param: nh}),
            )

        await sw.insert([entry("10.0.0.0/8", 1), entry("11.0.0.0/8", 2)])
        got = [e async for e in sw.read(fy.P4TableEntry(args.table))]
        if len(got) != 2:
            fail(f"expected 2 entries, read {len(got)}")

        try:
            await sw.insert([entry("10.0.0.0/8", 3)])
            fail("duplicate insert succeeded")
        except fy.P4ClientError as e:
            codes = [d.code for d in e.details.values()]
            if codes != [fy.P4ErrorCode.ALREADY_EXISTS]:
                fail(f"duplicate insert: unexpected details {e.details}")

        await sw.delete_all()
        left = [e async for e in sw.read(fy.P4TableEntry(args.table))]
        if left:
            fail(f"{len(left)} entries left after delete_all")
    print("OK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default="unix:/run/roceswitch/p4rt.sock")
    ap.add_argument("--device-id", type=int, default=1)
    ap.add_argument("--election-id", type=int, default=10)
    ap.add_argument("--table", default="ipv4_lpm")
    ap.add_argument("--field", default="dst_addr")
    ap.add_argument("--action", default="set_nexthop_id")
    ap.add_argument("--param", default="nexthop_id")
    fy.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
