"""PFC watchdog: pause-storm detection, action and restoration (roce-semantics §12).

Set-up: priority 3 lossless on ports 0 and 1, port 1 shaped to 100 Mb/s,
watchdog poll 100 ms, detection 200 ms, restoration 300 ms. A "storm" is a
PFC XOFF for priority 3 sent into port 1 every 20 ms while priority-3
traffic waits in port 1's queue (R-WD-5). Asserted: a storm event for
(port 1, priority 3) on ``WatchEvents`` and the ``watchdog_storms`` counter;
with action DROP the stuck and the new priority-3 packets are discarded
during the storm while priority 0 flows (R-WD-9); after the storm stops, a
restore event follows within restoration time plus slack and priority 3 is
forwarded again.
"""

import threading
import time

import grpc

import fabric
import roce
from rsbase import ROUTER_MAC, SwitchTest, host_mac, routed

PORT = 1
PRIO = 3
# One poll interval (100 ms) less scheduling jitter: the earliest a storm
# can be declared after the first XOFF (detection 200 ms = 2 polls).
EARLIEST_DETECTION_S = 0.09


class WatchdogTest(SwitchTest):
    def setUp(self):
        SwitchTest.setUp(self)
        self.route_v4("10.0.1.0/24", PORT)
        self.events = []
        self._stream = None
        self._thread = None

    def tearDown(self):
        if self._stream is not None:
            self._stream.cancel()
        if self._thread is not None:
            self._thread.join(timeout=5)
        SwitchTest.tearDown(self)

    def arm(self, action="WATCHDOG_ACTION_DROP"):
        # The event stream is opened first, so the two config_applied events
        # show that it works even if no storm event ever comes.
        self._stream = self.fabric.watch_events()

        def pump():
            try:
                for ev in self._stream:
                    self.events.append((time.time(), ev))
            except grpc.RpcError:
                pass

        self._thread = threading.Thread(target=pump, daemon=True)
        self._thread.start()
        time.sleep(0.1)
        self.set_ports(p0=dict(pfc_priorities=[PRIO]), p1=dict(pfc_priorities=[PRIO], speed_bps=100_000_000))
        self.fabric_set(
            "Watchdog",
            fabric.msg(
                "WatchdogConfig",
                enabled=True,
                detection_time_ms=200,
                restoration_time_ms=300,
                action=fabric.enum_value("WatchdogAction", action),
                poll_interval_ms=100,
            ),
        )
        time.sleep(0.2)

    def data(self, dscp, psn):
        return roce.roce_write(ROUTER_MAC, host_mac(0), "10.0.0.1", "10.0.1.2", dscp=dscp, psn=psn, payload_len=64)

    def storm(self, duration_s, during=None, prime=True):
        """XOFF for priority 3 into port 1 every 20 ms; ``during(elapsed)`` runs between frames.

        With ``prime`` a priority-3 packet is sent right after the first
        XOFF, so the paused queue is not empty (R-WD-5 needs occupancy).
        """
        t0 = time.time()
        if prime:
            self.send(PORT, roce.pfc_frame(host_mac(PORT), {PRIO: 0xFFFF}))
            time.sleep(0.01)
            self.send(0, self.data(26, 1))
        while time.time() - t0 < duration_s:
            self.send(PORT, roce.pfc_frame(host_mac(PORT), {PRIO: 0xFFFF}))
            if during is not None:
                during(time.time() - t0)
            time.sleep(0.02)
        return time.time()

    def event_time(self, kind, after=0.0):
        for t, ev in self.events:
            if t >= after and ev.WhichOneof("kind") == kind:
                body = getattr(ev, kind)
                if body.port == PORT and body.priority == PRIO:
                    return t
        return None


class WatchdogDetectsStorm(WatchdogTest):
    """A pause storm on (port 1, priority 3) raises watchdog_storms within detection time plus slack."""

    def runTest(self):
        self.arm()
        before = self.prio_counters(PORT, PRIO).watchdog_storms
        t_start = time.time()
        seen = []

        def during(elapsed):
            if not seen and self.prio_counters(PORT, PRIO).watchdog_storms > before:
                seen.append(elapsed)

        self.storm(1.0, during)
        self.assertTrue(seen, "watchdog_storms did not grow during a 1 s pause storm")
        self.assertLess(seen[0], 0.6, "storm detected only after %.2f s" % seen[0])
        # R-WD-6: declared on the ceil(D/P) = 2nd consecutive positive poll,
        # so never before one whole poll interval of storm.
        self.assertGreaterEqual(seen[0], EARLIEST_DETECTION_S, "storm declared after only %.3f s" % seen[0])
        self.assertGreaterEqual(time.time() - t_start, 1.0)


class WatchdogRestoresAfterStorm(WatchdogTest):
    """After the storm stops, priority 3 is forwarded again within restoration time plus slack."""

    def runTest(self):
        self.arm()
        before = self.prio_counters(PORT, PRIO).watchdog_storms
        t_end = self.storm(1.0)
        self.assertGreater(self.prio_counters(PORT, PRIO).watchdog_storms, before, "no storm detected")
        time.sleep(0.3 + 0.35)
        self.dataplane.flush()
        p = self.data(26, 9)
        self.send(0, p)
        got = self.recv(port=PORT, timeout=1.0)
        self.assertIsNotNone(got, "priority 3 not forwarded %.2f s after the storm" % (time.time() - t_end))
        self.assertEqual(got[1], bytes(routed(p, host_mac(PORT))))


class WatchdogEventsStreamed(WatchdogTest):
    """WatchEvents carries a storm event for (1, 3), then a restore event no earlier than restoration time."""

    def runTest(self):
        self.arm()
        t_start = time.time()
        t_end = self.storm(1.0)
        t_storm = self.event_time("storm")
        kinds = [ev.WhichOneof("kind") for _, ev in self.events]
        self.assertIsNotNone(t_storm, "no storm event for port %d priority %d; events seen: %s" % (PORT, PRIO, kinds))
        self.assertLess(t_storm - t_start, 0.7, "storm event after %.2f s" % (t_storm - t_start))
        self.assertGreaterEqual(t_storm - t_start, EARLIEST_DETECTION_S, "storm event after only %.3f s" % (t_storm - t_start))
        deadline = t_end + 1.5
        while self.event_time("restore", after=t_storm) is None and time.time() < deadline:
            time.sleep(0.05)
        t_restore = self.event_time("restore", after=t_storm)
        self.assertIsNotNone(t_restore, "no restore event after the storm ended")
        # R-WD-7: restored on the ceil(R/P) = 3rd consecutive poll without a
        # new PFC frame, so at least 300 ms after the last one (storm()
        # returns 20 ms after it), and within restoration time, the pause
        # the last XOFF asked for (0xFFFF quanta at 100 Mb/s, 335 ms) and
        # two polls of slack.
        quiet = t_restore - t_end
        self.assertGreaterEqual(quiet, 0.25, "restored %.3f s after the storm, before restoration time" % quiet)
        self.assertLess(quiet, 1.0, "restored only %.3f s after the storm" % quiet)


class WatchdogDropActionDiscards(WatchdogTest):
    """While stormed (action drop), priority-3 packets are discarded and priority 0 still flows."""

    def runTest(self):
        self.arm()
        before = self.prio_counters(PORT, PRIO).watchdog_storms
        sent3, sent0 = [], []

        def during(elapsed):
            if elapsed > 0.6 and len(sent3) < 10:
                p3, p0 = self.data(26, 100 + len(sent3)), self.data(0, 200 + len(sent0))
                self.send(0, p3)
                self.send(0, p0)
                sent3.append(p3)
                sent0.append(p0)

        self.storm(1.2, during)
        self.assertGreater(self.prio_counters(PORT, PRIO).watchdog_storms, before, "no storm detected")
        frames = self.collect(quiet_s=1.0)
        got = [d for p, d, _ in frames if p == PORT]
        expected0 = [bytes(routed(p, host_mac(PORT))) for p in sent0]
        for e in expected0:
            self.assertIn(e, got, "priority 0 packet lost during the storm")
        leaked = [d for d in got if d not in expected0]
        self.assertEqual(leaked, [], "priority-3 packets were forwarded by a stormed queue with action drop")
