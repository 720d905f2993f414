//! Pipelines whose type is known only at run time: a compiled program
//! loaded from a shared library (`p4-to-rust build`), and [`Switchable`],
//! the pipeline a switch daemon runs so that it can swap its program
//! between two packets while keeping its compiled-in one on the fast path.
//!
//! # Contract
//!
//! * [`DynPipeline`] is the object-safe face of [`Pipeline`]; every
//!   `Pipeline` is one ([`erase`]). Its packets are [`DynPacket`]s, one
//!   heap allocation per parsed packet (and per clone): the price of not
//!   knowing the header layout. The compiled-in program, run through
//!   [`Switchable`], allocates nothing more than it did.
//! * A `Box<dyn DynPipeline>` that crosses a shared-library boundary is
//!   sound only when both sides were compiled from the same `p4-target`
//!   sources by the same rustc for the same target: Rust has no stable
//!   ABI, so trait-object vtables, `Box` layouts and [`Runtime`] field
//!   offsets are only the same under that condition. [`crate::abi`]'s
//!   fingerprint is what a loader checks before it calls any Rust-ABI
//!   function of a library. Both sides allocate with the system allocator
//!   (neither sets a `#[global_allocator]`), so a box made in the library
//!   may be freed by the host and the other way round.
//! * A loaded library's statics (`&'static ProgramInfo`, vtables) live as
//!   long as the library is mapped: loaders never unload one.
//! * [`Switchable`] tags each packet with the generation of the program
//!   that parsed it. After a swap, packets already in the traffic manager
//!   finish egress on the program that parsed them (the previous program
//!   is kept for that); a packet of a program two swaps old is dropped at
//!   egress (`mark_to_drop`), as its program is gone.

use std::any::Any;
use std::fmt;

use crate::info::ProgramInfo;
use crate::pipeline::Pipeline;
use crate::runtime::Runtime;
use crate::v1model::StandardMetadata;

/// The object-safe form of [`Pipeline`] (see the module doc).
pub trait DynPipeline: Send {
    /// [`Pipeline::info`].
    fn info(&self) -> &'static ProgramInfo;
    /// [`Pipeline::runtime`].
    fn runtime(&self) -> &Runtime;
    /// [`Pipeline::runtime_mut`].
    fn runtime_mut(&mut self) -> &mut Runtime;
    /// [`Pipeline::parse`].
    fn parse(&mut self, data: &[u8], meta: StandardMetadata) -> DynPacket;
    /// [`Pipeline::parse_preserving`].
    fn parse_preserving(
        &mut self,
        data: &[u8],
        meta: StandardMetadata,
        from: &DynPacket,
        field_list: u8,
    ) -> DynPacket;
    /// [`Pipeline::ingress`]; `pkt` must come from this pipeline.
    fn ingress(&mut self, pkt: &mut DynPacket);
    /// [`Pipeline::egress`]; `pkt` must come from this pipeline.
    fn egress(&mut self, pkt: &mut DynPacket);
    /// [`Pipeline::deparse`]; `pkt` must come from this pipeline.
    fn deparse(&mut self, pkt: &mut DynPacket, data: &[u8], out: &mut Vec<u8>);
    /// [`Pipeline::deparse_in_place`]; `pkt` must come from this pipeline.
    fn deparse_in_place(&mut self, pkt: &mut DynPacket, frame: &mut Vec<u8>);
}

/// The object-safe form of a [`Pipeline::Packet`].
pub trait PacketObject: Send + fmt::Debug {
    /// A copy (multicast, clones).
    fn clone_box(&self) -> Box<dyn PacketObject>;
    /// [`Pipeline::meta`].
    fn meta(&self) -> &StandardMetadata;
    /// [`Pipeline::meta_mut`].
    fn meta_mut(&mut self) -> &mut StandardMetadata;
    /// [`Pipeline::reset_user_metadata`].
    fn reset_user_metadata(&mut self);
    /// [`Pipeline::preserve_fields`] from `from` (a packet of the same program).
    fn preserve_from(&mut self, from: &dyn PacketObject, field_list: u8);
    /// For downcasts inside the code that made the packet (type ids are
    /// only comparable within one copy of this crate).
    fn as_any(&self) -> &dyn Any;
    /// Mutable [`PacketObject::as_any`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A packet of a [`DynPipeline`].
#[derive(Debug)]
pub struct DynPacket(pub Box<dyn PacketObject>);

impl Clone for DynPacket {
    fn clone(&self) -> Self {
        DynPacket(self.0.clone_box())
    }
}

/// A [`Pipeline`] as a [`DynPipeline`] (what a pipeline library exports).
pub fn erase<P: Pipeline>(pipeline: P) -> Box<dyn DynPipeline>
where
    P::Packet: 'static,
{
    Box::new(Erased(pipeline))
}

struct Erased<P>(P);

struct ErasedPacket<P: Pipeline>(P::Packet);

impl<P: Pipeline> Clone for ErasedPacket<P> {
    fn clone(&self) -> Self {
        ErasedPacket(self.0.clone())
    }
}

impl<P: Pipeline> fmt::Debug for ErasedPacket<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

const FOREIGN_PACKET: &str = "a packet given to a pipeline that did not parse it";

fn inner<P: Pipeline>(pkt: &DynPacket) -> &P::Packet
where
    P::Packet: 'static,
{
    &pkt.0
        .as_any()
        .downcast_ref::<ErasedPacket<P>>()
        .expect(FOREIGN_PACKET)
        .0
}

fn inner_mut<P: Pipeline>(pkt: &mut DynPacket) -> &mut P::Packet
where
    P::Packet: 'static,
{
    &mut pkt
        .0
        .as_any_mut()
        .downcast_mut::<ErasedPacket<P>>()
        .expect(FOREIGN_PACKET)
        .0
}

impl<P: Pipeline> PacketObject for ErasedPacket<P>
where
    P::Packet: 'static,
{
    fn clone_box(&self) -> Box<dyn PacketObject> {
        Box::new(self.clone())
    }
    fn meta(&self) -> &StandardMetadata {
        P::meta(&self.0)
    }
    fn meta_mut(&mut self) -> &mut StandardMetadata {
        P::meta_mut(&mut self.0)
    }
    fn reset_user_metadata(&mut self) {
        P::reset_user_metadata(&mut self.0)
    }
    fn preserve_from(&mut self, from: &dyn PacketObject, field_list: u8) {
        let from = from
            .as_any()
            .downcast_ref::<ErasedPacket<P>>()
            .expect(FOREIGN_PACKET);
        P::preserve_fields(&from.0, &mut self.0, field_list)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl<P: Pipeline> DynPipeline for Erased<P>
where
    P::Packet: 'static,
{
    fn info(&self) -> &'static ProgramInfo {
        self.0.info()
    }
    fn runtime(&self) -> &Runtime {
        self.0.runtime()
    }
    fn runtime_mut(&mut self) -> &mut Runtime {
        self.0.runtime_mut()
    }
    fn parse(&mut self, data: &[u8], meta: StandardMetadata) -> DynPacket {
        DynPacket(Box::new(ErasedPacket::<P>(self.0.parse(data, meta))))
    }
    fn parse_preserving(
        &mut self,
        data: &[u8],
        meta: StandardMetadata,
        from: &DynPacket,
        field_list: u8,
    ) -> DynPacket {
        let pkt = self
            .0
            .parse_preserving(data, meta, inner::<P>(from), field_list);
        DynPacket(Box::new(ErasedPacket::<P>(pkt)))
    }
    fn ingress(&mut self, pkt: &mut DynPacket) {
        self.0.ingress(inner_mut::<P>(pkt))
    }
    fn egress(&mut self, pkt: &mut DynPacket) {
        self.0.egress(inner_mut::<P>(pkt))
    }
    fn deparse(&mut self, pkt: &mut DynPacket, data: &[u8], out: &mut Vec<u8>) {
        self.0.deparse(inner_mut::<P>(pkt), data, out)
    }
    fn deparse_in_place(&mut self, pkt: &mut DynPacket, frame: &mut Vec<u8>) {
        self.0.deparse_in_place(inner_mut::<P>(pkt), frame)
    }
}

/// Which program a [`Switchable`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Running {
    /// The compiled-in program.
    Builtin,
    /// A loaded program, by generation (counts swaps to loaded programs).
    Loaded(u32),
}

/// A packet of a [`Switchable`]: the compiled-in program's own packet
/// type, or a loaded program's packet with the generation that parsed it.
#[derive(Clone, Debug)]
pub enum SwitchablePacket<T> {
    /// Parsed by the compiled-in program.
    Builtin(T),
    /// Parsed by loaded program `gen`.
    Loaded(u32, DynPacket),
}

/// The compiled-in program `P`, or a program loaded at run time, swapped
/// between two packets (see the module doc for packets in flight).
pub struct Switchable<P> {
    builtin: P,
    running: Running,
    /// The running loaded program, if any, and the one before it (which
    /// packets already queued may still need for egress).
    current: Option<(u32, Box<dyn DynPipeline>)>,
    previous: Option<(u32, Box<dyn DynPipeline>)>,
    next_gen: u32,
}

impl<P: fmt::Debug> fmt::Debug for Switchable<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Switchable")
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

impl<P: Pipeline> Switchable<P> {
    /// Runs `builtin` until told otherwise.
    pub fn new(builtin: P) -> Self {
        Switchable {
            builtin,
            running: Running::Builtin,
            current: None,
            previous: None,
            next_gen: 1,
        }
    }

    /// Which program runs.
    pub fn running(&self) -> Running {
        self.running
    }

    /// The compiled-in program's info.
    pub fn builtin_info(&self) -> &'static ProgramInfo {
        self.builtin.info()
    }

    /// Makes `next` (a loaded program) run from the next packet on, or the
    /// compiled-in one for `None`. Returns the runtime of the program that
    /// ran until now (`None` when it is the same object, the compiled-in
    /// program installed again) and the new program's, for carrying
    /// entries over.
    pub fn install(
        &mut self,
        next: Option<Box<dyn DynPipeline>>,
    ) -> (Option<&Runtime>, &mut Runtime) {
        let was = self.running;
        if let Some(p) = next {
            let generation = self.next_gen;
            self.next_gen = self.next_gen.wrapping_add(1).max(1);
            if let Some(cur) = self.current.take() {
                self.previous = Some(cur);
            }
            self.current = Some((generation, p));
            self.running = Running::Loaded(generation);
        } else if let Some(cur) = self.current.take() {
            self.previous = Some(cur);
            self.running = Running::Builtin;
        }
        let Switchable {
            builtin,
            current,
            previous,
            running,
            ..
        } = self;
        match (was, *running) {
            (Running::Builtin, Running::Builtin) => (None, builtin.runtime_mut()),
            (Running::Builtin, Running::Loaded(_)) => (
                Some(builtin.runtime()),
                current.as_mut().expect("installed").1.runtime_mut(),
            ),
            (Running::Loaded(_), Running::Builtin) => (
                Some(previous.as_ref().expect("kept").1.runtime()),
                builtin.runtime_mut(),
            ),
            (Running::Loaded(_), Running::Loaded(_)) => (
                Some(previous.as_ref().expect("kept").1.runtime()),
                current.as_mut().expect("installed").1.runtime_mut(),
            ),
        }
    }

    /// The loaded pipeline that parsed a packet of generation `g`, if kept.
    fn loaded(&mut self, g: u32) -> Option<&mut Box<dyn DynPipeline>> {
        match (&mut self.current, &mut self.previous) {
            (Some((cg, c)), _) if *cg == g => Some(c),
            (_, Some((pg, p))) if *pg == g => Some(p),
            _ => None,
        }
    }
}

impl<P: Pipeline> Pipeline for Switchable<P> {
    type Packet = SwitchablePacket<P::Packet>;

    fn info(&self) -> &'static ProgramInfo {
        match &self.current {
            Some((_, p)) if self.running != Running::Builtin => p.info(),
            _ => self.builtin.info(),
        }
    }

    fn runtime(&self) -> &Runtime {
        match &self.current {
            Some((_, p)) if self.running != Running::Builtin => p.runtime(),
            _ => self.builtin.runtime(),
        }
    }

    fn runtime_mut(&mut self) -> &mut Runtime {
        match &mut self.current {
            Some((_, p)) if self.running != Running::Builtin => p.runtime_mut(),
            _ => self.builtin.runtime_mut(),
        }
    }

    #[inline]
    fn parse(&mut self, data: &[u8], meta: StandardMetadata) -> Self::Packet {
        match (&mut self.current, self.running) {
            (Some((g, p)), Running::Loaded(_)) => SwitchablePacket::Loaded(*g, p.parse(data, meta)),
            _ => SwitchablePacket::Builtin(self.builtin.parse(data, meta)),
        }
    }

    #[inline]
    fn parse_into(&mut self, data: &[u8], meta: StandardMetadata, pkt: &mut Self::Packet) {
        let loaded = matches!((&self.current, self.running), (Some(_), Running::Loaded(_)));
        match pkt {
            SwitchablePacket::Builtin(p) if !loaded => self.builtin.parse_into(data, meta, p),
            _ => *pkt = self.parse(data, meta),
        }
    }

    fn parse_preserving(
        &mut self,
        data: &[u8],
        meta: StandardMetadata,
        from: &Self::Packet,
        field_list: u8,
    ) -> Self::Packet {
        // A resubmit or recirculation runs the program that parsed `from`.
        match from {
            SwitchablePacket::Builtin(f) => {
                SwitchablePacket::Builtin(self.builtin.parse_preserving(data, meta, f, field_list))
            }
            SwitchablePacket::Loaded(g, f) => match self.loaded(*g) {
                Some(p) => {
                    SwitchablePacket::Loaded(*g, p.parse_preserving(data, meta, f, field_list))
                }
                None => self.parse(data, meta),
            },
        }
    }

    #[inline]
    fn ingress(&mut self, pkt: &mut Self::Packet) {
        match pkt {
            SwitchablePacket::Builtin(p) => self.builtin.ingress(p),
            SwitchablePacket::Loaded(g, p) => match self.loaded(*g) {
                Some(pipe) => pipe.ingress(p),
                None => p.0.meta_mut().mark_to_drop(),
            },
        }
    }

    #[inline]
    fn egress(&mut self, pkt: &mut Self::Packet) {
        match pkt {
            SwitchablePacket::Builtin(p) => self.builtin.egress(p),
            SwitchablePacket::Loaded(g, p) => match self.loaded(*g) {
                Some(pipe) => pipe.egress(p),
                None => p.0.meta_mut().mark_to_drop(),
            },
        }
    }

    #[inline]
    fn deparse(&mut self, pkt: &mut Self::Packet, data: &[u8], out: &mut Vec<u8>) {
        match pkt {
            SwitchablePacket::Builtin(p) => self.builtin.deparse(p, data, out),
            SwitchablePacket::Loaded(g, p) => match self.loaded(*g) {
                Some(pipe) => pipe.deparse(p, data, out),
                None => out.clear(),
            },
        }
    }

    #[inline]
    fn deparse_in_place(&mut self, pkt: &mut Self::Packet, frame: &mut Vec<u8>) {
        match pkt {
            SwitchablePacket::Builtin(p) => self.builtin.deparse_in_place(p, frame),
            SwitchablePacket::Loaded(g, p) => match self.loaded(*g) {
                Some(pipe) => pipe.deparse_in_place(p, frame),
                None => frame.clear(),
            },
        }
    }

    #[inline]
    fn meta(pkt: &Self::Packet) -> &StandardMetadata {
        match pkt {
            SwitchablePacket::Builtin(p) => P::meta(p),
            SwitchablePacket::Loaded(_, p) => p.0.meta(),
        }
    }

    #[inline]
    fn meta_mut(pkt: &mut Self::Packet) -> &mut StandardMetadata {
        match pkt {
            SwitchablePacket::Builtin(p) => P::meta_mut(p),
            SwitchablePacket::Loaded(_, p) => p.0.meta_mut(),
        }
    }

    fn reset_user_metadata(pkt: &mut Self::Packet) {
        match pkt {
            SwitchablePacket::Builtin(p) => P::reset_user_metadata(p),
            SwitchablePacket::Loaded(_, p) => p.0.reset_user_metadata(),
        }
    }

    fn preserve_fields(from: &Self::Packet, to: &mut Self::Packet, field_list: u8) {
        match (from, to) {
            (SwitchablePacket::Builtin(f), SwitchablePacket::Builtin(t)) => {
                P::preserve_fields(f, t, field_list)
            }
            (SwitchablePacket::Loaded(fg, f), SwitchablePacket::Loaded(tg, t)) if fg == tg => {
                t.0.preserve_from(&*f.0, field_list)
            }
            // Packets of two programs share no field lists.
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program that sends every packet to port `self.port` and stamps
    /// its id into `egress_rid` at egress.
    struct Toy {
        id: u16,
        port: u16,
        info: &'static ProgramInfo,
        rt: Runtime,
    }

    fn info(name: &'static str) -> &'static ProgramInfo {
        Box::leak(Box::new(ProgramInfo {
            name,
            ..ProgramInfo::EMPTY
        }))
    }

    fn toy(id: u16, port: u16) -> Toy {
        let info = info(["a", "b", "c", "d"][usize::from(id)]);
        Toy {
            id,
            port,
            info,
            rt: Runtime::new(info),
        }
    }

    impl Pipeline for Toy {
        type Packet = StandardMetadata;
        fn info(&self) -> &'static ProgramInfo {
            self.info
        }
        fn runtime(&self) -> &Runtime {
            &self.rt
        }
        fn runtime_mut(&mut self) -> &mut Runtime {
            &mut self.rt
        }
        fn parse(&mut self, _: &[u8], meta: StandardMetadata) -> StandardMetadata {
            meta
        }
        fn parse_preserving(
            &mut self,
            _: &[u8],
            meta: StandardMetadata,
            _: &StandardMetadata,
            _: u8,
        ) -> StandardMetadata {
            meta
        }
        fn ingress(&mut self, pkt: &mut StandardMetadata) {
            pkt.egress_spec = self.port;
        }
        fn egress(&mut self, pkt: &mut StandardMetadata) {
            pkt.egress_rid = self.id;
        }
        fn deparse(&mut self, _: &mut StandardMetadata, data: &[u8], out: &mut Vec<u8>) {
            out.clear();
            out.extend_from_slice(data);
        }
        fn meta(pkt: &StandardMetadata) -> &StandardMetadata {
            pkt
        }
        fn meta_mut(pkt: &mut StandardMetadata) -> &mut StandardMetadata {
            pkt
        }
        fn reset_user_metadata(_: &mut StandardMetadata) {}
        fn preserve_fields(_: &StandardMetadata, _: &mut StandardMetadata, _: u8) {}
    }

    fn through_ingress(s: &mut Switchable<Toy>) -> SwitchablePacket<StandardMetadata> {
        let mut p = s.parse(b"x", StandardMetadata::arriving(0, 1, 0));
        s.ingress(&mut p);
        p
    }

    fn egress(s: &mut Switchable<Toy>, mut p: SwitchablePacket<StandardMetadata>) -> (u16, u16) {
        s.egress(&mut p);
        let m = Switchable::<Toy>::meta(&p);
        (m.egress_spec, m.egress_rid)
    }

    #[test]
    fn queued_packets_finish_on_the_program_that_parsed_them() {
        let mut s = Switchable::new(toy(0, 1));
        assert_eq!(s.running(), Running::Builtin);
        let by_builtin = through_ingress(&mut s);
        let _ = s.install(Some(erase(toy(1, 2))));
        assert_eq!(s.info().name, "b");
        let by_first = through_ingress(&mut s);
        let _ = s.install(Some(erase(toy(2, 3))));
        let by_second = through_ingress(&mut s);
        // Queued across swaps: each egresses on its own program.
        assert_eq!(egress(&mut s, by_builtin), (1, 0));
        assert_eq!(egress(&mut s, by_first), (2, 1));
        assert_eq!(egress(&mut s, by_second), (3, 2));
        // Two swaps on, the first loaded program is gone: its packets drop.
        let by_second = through_ingress(&mut s);
        let by_first_again = {
            let _ = s.install(Some(erase(toy(3, 4))));
            let _ = s.install(None);
            by_second
        };
        let (spec, _) = egress(&mut s, by_first_again);
        assert_eq!(spec, crate::v1model::DROP_PORT, "program gone: dropped");
        assert_eq!(s.running(), Running::Builtin);
        assert_eq!(s.info().name, "a");
        let p = through_ingress(&mut s);
        assert_eq!(egress(&mut s, p), (1, 0));
    }

    #[test]
    fn install_hands_over_the_old_and_new_runtimes() {
        let mut s = Switchable::new(toy(0, 1));
        let (old, new) = s.install(None);
        assert!(old.is_none(), "the compiled-in program again: same object");
        assert_eq!(new.info.name, "a");
        let (old, new) = s.install(Some(erase(toy(1, 2))));
        assert_eq!(old.map(|r| r.info.name), Some("a"));
        assert_eq!(new.info.name, "b");
        let (old, new) = s.install(None);
        assert_eq!(old.map(|r| r.info.name), Some("b"));
        assert_eq!(new.info.name, "a");
    }
}
