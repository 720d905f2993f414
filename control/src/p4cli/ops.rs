//! The P4Runtime exchanges behind `rocectl table` and `rocectl counter`:
//! fetch the P4Info, become primary on a StreamChannel (kept open until the
//! Write is answered), Write or Read by name. Printing stays with the caller.

use proto::p4::config::v1 as cfg;
use proto::p4::v1 as p4pb;
use proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use tonic::transport::Channel;

use super::Error;
use super::names as p4names;

/// Which device to talk to, and the election id to write with.
#[derive(Clone, Copy, Debug)]
pub struct Target {
    /// P4Runtime device id.
    pub device_id: u64,
    /// Election id used to become primary before a Write.
    pub election_id: u128,
}

/// A table entry as typed: `TABLE MATCH... [ACTION PARAM...] [--priority N]`.
#[derive(Clone, Copy, Debug)]
pub struct EntrySpec<'a> {
    /// Table name (full, alias or unique dotted suffix).
    pub table: &'a str,
    /// Match values in P4Info order, then the action and its parameters.
    pub args: &'a [String],
    /// Entry priority.
    pub priority: Option<i32>,
}

/// The P4Info and cookie of the pipeline `device_id` runs (no device
/// config: a bundle can be large and a terminal needs none of it).
pub async fn pipeline_config(
    c: &mut P4RuntimeClient<Channel>,
    device_id: u64,
) -> Result<p4pb::ForwardingPipelineConfig, Error> {
    use p4pb::get_forwarding_pipeline_config_request::ResponseType;
    let r = c
        .get_forwarding_pipeline_config(p4pb::GetForwardingPipelineConfigRequest {
            device_id,
            response_type: ResponseType::P4infoAndCookie as i32,
        })
        .await?
        .into_inner();
    Ok(r.config.unwrap_or_default())
}

/// The P4Info of the pipeline `device_id` runs.
pub async fn p4info(
    c: &mut P4RuntimeClient<Channel>,
    device_id: u64,
) -> Result<cfg::P4Info, Error> {
    pipeline_config(c, device_id)
        .await?
        .p4info
        .ok_or_else(|| Error::Server("the device has no pipeline loaded".to_string()))
}

/// `v` as P4Runtime's `Uint128` (election ids).
pub fn wire(v: u128) -> p4pb::Uint128 {
    p4pb::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

/// How long [`become_primary`] waits for the arbitration reply.
pub const ARBITRATION_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// An open StreamChannel on which this client is primary: primacy lasts
/// while this value (or the sender [`Primary::keep_draining`] returns)
/// lives.
pub struct Primary {
    tx: tokio::sync::mpsc::Sender<p4pb::StreamMessageRequest>,
    rx: tonic::Streaming<p4pb::StreamMessageResponse>,
}

impl Primary {
    /// For a controller that stays: reads (and drops) what the switch sends
    /// on the stream from a task of the current runtime, so the server never
    /// blocks on an unread stream; the returned sender keeps the stream open.
    pub fn keep_draining(self) -> tokio::sync::mpsc::Sender<p4pb::StreamMessageRequest> {
        let mut rx = self.rx;
        tokio::spawn(async move { while let Ok(Some(_)) = rx.message().await {} });
        self.tx
    }
}

/// Arbitrates on a new StreamChannel with `target`'s election id (P4Runtime
/// §5); fails unless the switch answers within [`ARBITRATION_WAIT`] that
/// this client is primary.
pub async fn become_primary(
    c: &mut P4RuntimeClient<Channel>,
    target: &Target,
) -> Result<Primary, Error> {
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    let hello = p4pb::StreamMessageRequest {
        update: Some(p4pb::stream_message_request::Update::Arbitration(
            p4pb::MasterArbitrationUpdate {
                device_id: target.device_id,
                election_id: Some(wire(target.election_id)),
                ..Default::default()
            },
        )),
    };
    tx.send(hello)
        .await
        .map_err(|_| Error::Server("stream closed".to_string()))?;
    let mut stream = c
        .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?
        .into_inner();
    loop {
        let msg = tokio::time::timeout(ARBITRATION_WAIT, stream.message())
            .await
            .map_err(|_| {
                Error::Server(format!(
                    "no arbitration reply within {} s",
                    ARBITRATION_WAIT.as_secs()
                ))
            })??;
        match msg.and_then(|m| m.update) {
            Some(p4pb::stream_message_response::Update::Arbitration(a)) => {
                let code = a.status.as_ref().map_or(0, |s| s.code);
                if code != 0 {
                    return Err(Error::Server(format!(
                        "not primary with election id {} (another controller holds a higher one)",
                        target.election_id
                    )));
                }
                return Ok(Primary { tx, rx: stream });
            }
            Some(_) => continue,
            None => {
                return Err(Error::Server("stream ended during arbitration".to_string()));
            }
        }
    }
}

/// The table entry `a` describes, checked against `info`: match values in
/// P4Info order, then (unless `with_action` is false, as for a delete) the
/// action and its parameters; the priority is required exactly when the
/// table has ternary, range or optional keys (P4Runtime §9.1).
pub fn entry(
    info: &cfg::P4Info,
    a: &EntrySpec<'_>,
    with_action: bool,
) -> Result<p4pb::TableEntry, Error> {
    let t = p4names::table(info, a.table)?;
    let nfields = t.match_fields.len();
    if a.args.len() < nfields {
        return Err(Error::Input(format!(
            "{} needs {} match value(s) ({}), got {}",
            a.table,
            nfields,
            t.match_fields
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            a.args.len()
        )));
    }
    let mut matches = Vec::new();
    for (f, text) in t.match_fields.iter().zip(a.args) {
        if let Some(m) = p4names::field_match(f, text)? {
            matches.push(m);
        }
    }
    let rest = &a.args[nfields..];
    let action = if with_action {
        let Some((name, params)) = rest.split_first() else {
            return Err(Error::Input(format!("{}: missing action", a.table)));
        };
        let act = p4names::action(info, t, name)?;
        if params.len() != act.params.len() {
            return Err(Error::Input(format!(
                "{name} takes {} parameter(s) ({}), got {}",
                act.params.len(),
                act.params
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                params.len()
            )));
        }
        let mut out = Vec::new();
        for (p, text) in act.params.iter().zip(params) {
            let v = p4names::value(text, p.bitwidth, &p.name)?;
            out.push(p4pb::action::Param {
                param_id: p.id,
                value: p4names::bytes(v),
            });
        }
        Some(p4pb::TableAction {
            r#type: Some(p4pb::table_action::Type::Action(p4pb::Action {
                action_id: act.preamble.as_ref().map_or(0, |p| p.id),
                params: out,
            })),
        })
    } else {
        if !rest.is_empty() {
            return Err(Error::Input(format!(
                "delete takes only match values; unexpected {:?}",
                rest.join(" ")
            )));
        }
        None
    };
    let needs_priority = t.match_fields.iter().any(|f| {
        use cfg::match_field::MatchType as K;
        matches!(p4names::kind(f), K::Ternary | K::Range | K::Optional)
    });
    let priority = match (needs_priority, a.priority) {
        (true, Some(p)) if p > 0 => p,
        (true, _) => {
            return Err(Error::Input(format!(
                "{} has ternary/range/optional keys: --priority N (N > 0) is required",
                a.table
            )));
        }
        (false, Some(p)) if p != 0 => {
            return Err(Error::Input(format!(
                "{} has only exact/LPM keys: no --priority",
                a.table
            )));
        }
        (false, _) => 0,
    };
    Ok(p4pb::TableEntry {
        table_id: t.preamble.as_ref().map_or(0, |p| p.id),
        r#match: matches,
        action,
        priority,
        ..Default::default()
    })
}

/// `e` as `rocectl table add` would take it back: matches, action, params.
pub fn show_entry(info: &cfg::P4Info, t: &cfg::Table, e: &p4pb::TableEntry) -> String {
    let mut words = Vec::new();
    for f in &t.match_fields {
        match e.r#match.iter().find(|m| m.field_id == f.id) {
            Some(m) => words.push(p4names::show_match(f, m)),
            None => words.push("*".to_string()),
        }
    }
    match e.action.as_ref().and_then(|a| a.r#type.as_ref()) {
        Some(p4pb::table_action::Type::Action(a)) => {
            let act = info
                .actions
                .iter()
                .find(|x| x.preamble.as_ref().map_or(0, |p| p.id) == a.action_id);
            let name = act
                .and_then(|x| x.preamble.as_ref())
                .map_or_else(|| format!("{:#x}", a.action_id), |p| p.name.clone());
            words.push(name);
            for p in &a.params {
                let w = act
                    .and_then(|x| x.params.iter().find(|q| q.id == p.param_id))
                    .map_or(128, |q| q.bitwidth);
                words.push(p4names::show(&p.value, w));
            }
        }
        Some(other) => words.push(format!("{other:?}")),
        None => words.push("(no action)".to_string()),
    }
    if e.priority != 0 {
        words.push(format!("--priority {}", e.priority));
    }
    words.join(" ")
}

/// Every entity one Read of `e` streams back.
pub async fn read_all(
    c: &mut P4RuntimeClient<Channel>,
    device_id: u64,
    e: p4pb::entity::Entity,
) -> Result<Vec<p4pb::Entity>, Error> {
    let mut stream = c
        .read(p4pb::ReadRequest {
            device_id,
            entities: vec![p4pb::Entity { entity: Some(e) }],
            ..Default::default()
        })
        .await?
        .into_inner();
    let mut out = Vec::new();
    while let Some(r) = stream.message().await? {
        out.extend(r.entities);
    }
    Ok(out)
}

/// The entries of `table`, one line each as [`show_entry`] writes them
/// (the default entry left out).
pub async fn list_entries(
    channel: Channel,
    device_id: u64,
    table: &str,
) -> Result<Vec<String>, Error> {
    let mut c = P4RuntimeClient::new(channel);
    let info = p4info(&mut c, device_id).await?;
    let t = p4names::table(&info, table)?;
    let ents = read_all(
        &mut c,
        device_id,
        p4pb::entity::Entity::TableEntry(p4pb::TableEntry {
            table_id: t.preamble.as_ref().map_or(0, |p| p.id),
            ..Default::default()
        }),
    )
    .await?;
    Ok(ents
        .into_iter()
        .filter_map(|e| match e.entity {
            Some(p4pb::entity::Entity::TableEntry(te)) if !te.is_default_action => {
                Some(show_entry(&info, t, &te))
            }
            _ => None,
        })
        .collect())
}

/// Inserts, modifies or deletes (`op`) the entry `spec` names, as primary.
pub async fn write_entry(
    channel: Channel,
    target: &Target,
    op: p4pb::update::Type,
    spec: &EntrySpec<'_>,
) -> Result<(), Error> {
    let mut c = P4RuntimeClient::new(channel);
    let info = p4info(&mut c, target.device_id).await?;
    let te = entry(&info, spec, op != p4pb::update::Type::Delete)?;
    let _primary = become_primary(&mut c, target).await?;
    c.write(p4pb::WriteRequest {
        device_id: target.device_id,
        election_id: Some(wire(target.election_id)),
        updates: vec![p4pb::Update {
            r#type: op as i32,
            entity: Some(p4pb::Entity {
                entity: Some(p4pb::entity::Entity::TableEntry(te)),
            }),
        }],
        ..Default::default()
    })
    .await?;
    Ok(())
}

/// One cell of an indirect counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterCell {
    /// Index in the counter array.
    pub index: i64,
    /// Packets counted.
    pub packets: i64,
    /// Bytes counted.
    pub bytes: i64,
}

/// The cells of counter `name` (all, or the one at `index`).
pub async fn read_counter(
    channel: Channel,
    device_id: u64,
    name: &str,
    index: Option<i64>,
) -> Result<Vec<CounterCell>, Error> {
    let mut c = P4RuntimeClient::new(channel);
    let info = p4info(&mut c, device_id).await?;
    let ctr = p4names::counter(&info, name)?;
    if let Some(i) = index
        && (i < 0 || i >= ctr.size)
    {
        return Err(Error::Input(format!(
            "{name}: index {i} outside 0..{}",
            ctr.size
        )));
    }
    let ents = read_all(
        &mut c,
        device_id,
        p4pb::entity::Entity::CounterEntry(p4pb::CounterEntry {
            counter_id: ctr.preamble.as_ref().map_or(0, |p| p.id),
            index: index.map(|i| p4pb::Index { index: i }),
            ..Default::default()
        }),
    )
    .await?;
    Ok(ents
        .into_iter()
        .filter_map(|e| match e.entity {
            Some(p4pb::entity::Entity::CounterEntry(ce)) => {
                let d = ce.data.unwrap_or_default();
                Some(CounterCell {
                    index: ce.index.map_or(0, |i| i.index),
                    packets: d.packet_count,
                    bytes: d.byte_count,
                })
            }
            _ => None,
        })
        .collect())
}
