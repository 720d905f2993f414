//! The P4Runtime service's view of a running switch: [`SwitchDevice`], the
//! [`Device`] it drives (the fabric service has its own,
//! [`crate::fabric::SwitchBackend`]).
//!
//! It talks to the dataplane thread only through the driver's command
//! channel ([`CommandSender`], which also wakes an idle driver): every
//! operation is a closure run on the switch's thread between packets.
//! Nothing here holds a lock the packet path could wait on. Control-plane
//! jobs get the program's runtime and the switch's packet replication
//! engine together, with the switch's ports (front panel plus CPU port) as
//! the ports a replica may name.

use dataplane::driver::{Command, CommandSender};
use dataplane::switch::Switch;
use p4_target::dynamic::Switchable;
use p4_target::pipeline::Pipeline;
use tokio::sync::broadcast;

use crate::device::{
    Device, DeviceError, DeviceJob, DeviceState, Digest, PipelineSlot, PortSpace, SwapJob,
};

/// A [`Device`] backed by the driver thread of a real switch.
pub struct SwitchDevice<P: Pipeline> {
    commands: CommandSender<P>,
    packet_in: broadcast::Sender<Vec<u8>>,
    digests: Option<broadcast::Sender<Digest>>,
    /// The switch's pipeline as a swap sees it, when it can change program.
    slot: Option<fn(&mut P) -> &mut dyn PipelineSlot>,
}

impl<P: Pipeline> std::fmt::Debug for SwitchDevice<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwitchDevice").finish_non_exhaustive()
    }
}

impl<P: Pipeline> SwitchDevice<P> {
    /// A device sending commands on `commands`; packet-ins are published on
    /// `packet_in` (the driver's packet-in callback sends there).
    pub fn new(commands: CommandSender<P>, packet_in: broadcast::Sender<Vec<u8>>) -> Self {
        SwitchDevice {
            commands,
            packet_in,
            digests: None,
            slot: None,
        }
    }

    /// Reports the digests published on `digests` (the driver's digest
    /// callback sends there).
    pub fn with_digests(mut self, digests: broadcast::Sender<Digest>) -> Self {
        self.digests = Some(digests);
        self
    }
}

impl<Q: Pipeline> SwitchDevice<Switchable<Q>> {
    /// Lets P4Runtime load pipelines into the switch
    /// ([`Device::submit_swap`]).
    pub fn with_pipeline_swaps(mut self) -> Self {
        self.slot = Some(|p| p);
        self
    }
}

impl<P: Pipeline> Device for SwitchDevice<P> {
    fn submit_swap(&self, job: SwapJob) -> Result<(), DeviceError> {
        let slot = self.slot.ok_or(DeviceError::NoPipelineSwap)?;
        let cmd: Command<P> = Box::new(move |sw: &mut Switch<P>, _now| {
            let (pipeline, pre) = sw.pipeline_and_pre_mut();
            job(slot(pipeline), Some(pre))
        });
        self.commands.send(cmd).map_err(|_| DeviceError::Stopped)
    }

    fn submit_job(&self, job: DeviceJob) -> Result<(), DeviceError> {
        let cmd: Command<P> = Box::new(move |sw: &mut Switch<P>, now| {
            let ports = PortSpace {
                front_panel: u16::try_from(sw.num_ports()).unwrap_or(u16::MAX),
                cpu_port: sw.cpu_port(),
            };
            let ports_down = (0..ports.front_panel)
                .filter(|&p| sw.port_oper_up(p) == Some(false))
                .collect();
            let (pipeline, pre) = sw.pipeline_and_pre_mut();
            job(&mut DeviceState {
                runtime: pipeline.runtime_mut(),
                pre: Some(pre),
                ports: Some(ports),
                now_ns: now.as_nanos(),
                ports_down,
            })
        });
        self.commands.send(cmd).map_err(|_| DeviceError::Stopped)
    }

    fn packet_out(&self, frame: Vec<u8>) -> Result<(), DeviceError> {
        let cmd: Command<P> =
            Box::new(move |sw: &mut Switch<P>, now| sw.handle_packet_out(&frame, now));
        self.commands.send(cmd).map_err(|_| DeviceError::Stopped)
    }

    fn packet_in(&self) -> Option<broadcast::Receiver<Vec<u8>>> {
        Some(self.packet_in.subscribe())
    }

    fn digests(&self) -> Option<broadcast::Receiver<Digest>> {
        self.digests.as_ref().map(broadcast::Sender::subscribe)
    }
}
