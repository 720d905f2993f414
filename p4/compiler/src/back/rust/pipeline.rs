//! Pipeline glue: the v1model package (`V1Switch`) as an implementation
//! of `::p4_target::pipeline::Pipeline`.

use super::*;

impl Gen<'_> {
    /// The statements `parse_into` resets the headers of the packet it
    /// reuses with. A header of a type no statement writes
    /// ([`Gen::never_written`]) changes only when `extract` fills it, which
    /// makes it valid, so while invalid it still holds its reset value:
    /// it is reset only if valid. That holds of any packet the pipeline
    /// made (parsed, cloned or default), so packets stay independent of the
    /// one before in the same struct. The rest are stored over.
    fn headers_reset(&self) -> Vec<String> {
        let whole = vec!["pkt.hdr = Default::default();".to_string()];
        let Some(Ty::Composite(hs)) = &self.prog.headers_ty else {
            return whole;
        };
        let hs = &self.prog.composites[*hs];
        if hs.kind != CompositeKind::Struct {
            return whole;
        }
        let mut lines = Vec::new();
        let mut skipped = false;
        for f in &hs.fields {
            let name = field_ident(&f.name);
            match &f.ty {
                Ty::Composite(h) if self.never_written.contains(&h.index()) => {
                    skipped = true;
                    lines.push(format!(
                        "if pkt.hdr.{name}.valid {{ pkt.hdr.{name} = Default::default(); }}"
                    ));
                }
                _ => lines.push(format!("pkt.hdr.{name} = Default::default();")),
            }
        }
        if skipped { lines } else { whole }
    }

    pub(super) fn pipeline(&mut self, main: &Main) -> Result<(), BackError> {
        let hdr_ty = match &self.prog.headers_ty {
            Some(t) => self.rust_ty(t)?,
            None => return bad("internal: unknown headers type", None),
        };
        let meta_ty = match &self.prog.meta_ty {
            Some(t) => self.rust_ty(t)?,
            None => return bad("internal: unknown metadata type", None),
        };
        let parser_fn = self.names.parsers[main.parser.index()].clone();
        let find = |c: Handle<Control>| -> Result<String, BackError> {
            self.prog
                .instances
                .iter()
                .position(|i| i.control == c && !i.path.contains('.'))
                .map(|i| self.names.inst_apply[i].clone())
                .ok_or(BackError {
                    message: "internal: top-level control without instance".into(),
                    span: None,
                })
        };
        let verify = find(main.verify)?;
        let ingress = find(main.ingress)?;
        let egress = find(main.egress)?;
        let compute = find(main.compute)?;
        let deparser = find(main.deparser)?;
        let deparser_reads_payload = self.deparser_reads_payload(main.deparser);
        // Each stage runs the traced instance of the generated code only for
        // a traced packet (see `trace.rs`).
        let stage = StageCall {
            inner: self.fn_turbofish(),
        };
        // With user externs the program is generic over their
        // implementation and passes its objects to every control.
        let (generics, prog_ty, ext_arg) = match &self.names.user {
            Some(u) => (
                format!("<{}: {}>", u.param, u.externs),
                format!("Program<{}>", u.param),
                "&mut self.ext, ",
            ),
            None => (String::new(), "Program".to_string(), ""),
        };
        let user = self
            .names
            .user
            .as_ref()
            .map(|u| (u.objects.clone(), u.param.clone()));
        let hdr_reset = self.headers_reset();
        let w = &mut self.w;
        w.line("/// One packet between parse and deparse.");
        w.line("#[derive(Clone, Debug, Default)]");
        w.open("pub struct Packet {");
        w.line(format!("pub hdr: {hdr_ty},"));
        w.line(format!("pub meta: {meta_ty},"));
        w.line("pub sm: ::p4_target::v1model::StandardMetadata,");
        w.line("pub payload_offset: usize,");
        w.close("}");
        w.line("");
        match &user {
            None => {
                w.line("/// The compiled program: its runtime state.");
                w.line("#[derive(Debug)]");
                w.open("pub struct Program {");
                w.line("pub rt: ::p4_target::runtime::Runtime,");
                w.line("/// Scratch for `deparse_in_place`: the emitted headers.");
                w.line("headers: Vec<u8>,");
                w.close("}");
            }
            Some((objects, x)) => {
                w.line("/// The compiled program: its runtime state and user extern objects.");
                w.open(format!("pub struct Program{generics} {{"));
                w.line("pub rt: ::p4_target::runtime::Runtime,");
                w.line(format!("pub ext: {objects}<{x}>,"));
                w.line("/// Scratch for `deparse_in_place`: the emitted headers.");
                w.line("headers: Vec<u8>,");
                w.close("}");
                w.line("");
                w.open(format!(
                    "impl{generics} ::core::fmt::Debug for {prog_ty} {{"
                ));
                w.open(
                    "fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {",
                );
                w.line(
                    "f.debug_struct(\"Program\").field(\"rt\", &self.rt).finish_non_exhaustive()",
                );
                w.close("}");
                w.close("}");
            }
        }
        w.line("");
        w.open(format!("impl{generics} {prog_ty} {{"));
        w.line("/// A fresh instance with empty tables.");
        w.open("pub fn new() -> Self {");
        match &user {
            None => {
                w.open("Program {");
                w.line("rt: ::p4_target::runtime::Runtime::new(&PROGRAM_INFO),");
                w.line("headers: Vec::new(),");
                w.close("}");
            }
            Some((objects, _)) => {
                w.open("Program {");
                w.line("rt: ::p4_target::runtime::Runtime::new(&PROGRAM_INFO),");
                w.line(format!("ext: {objects}::new(),"));
                w.line("headers: Vec::new(),");
                w.close("}");
            }
        }
        w.close("}");
        w.line("");
        let parser_body = vec![
            "let mut env = Env::new(data, 0, &pkt.sm);".to_string(),
            "let mut cur = PacketIn { data, off_bits: 0 };".to_string(),
            format!("let parsed = {parser_fn}{{T}}("),
            format!(
                "    &mut self.rt, &mut env, {ext_arg}&mut cur, &mut pkt.hdr, &mut pkt.meta, &mut pkt.sm,"
            ),
            ");".to_string(),
            "if let Err(e) = parsed {".to_string(),
            "    pkt.sm.parser_error = e;".to_string(),
            if self.trace_points {
                "    if TRACE { self.rt.trace.parser_error(e); }".to_string()
            } else {
                String::new()
            },
            "}".to_string(),
            "pkt.payload_offset = (cur.off_bits / 8).min(data.len());".to_string(),
            "env.payload_offset = pkt.payload_offset;".to_string(),
            format!(
                "let _ = {verify}{{T}}(&mut self.rt, &mut env, {ext_arg}&mut pkt.hdr, &mut pkt.meta);"
            ),
            "env.store(&mut pkt.sm);".to_string(),
        ];
        stage.write_fn(
            w,
            &[
                "/// Parser and `verifyChecksum` on `data`, in place on `pkt` (no",
                "/// packet struct is moved: the caller builds it where it lives).",
            ],
            "run_parser",
            "data: &[u8], pkt: &mut Packet",
            "data, pkt",
            &parser_body,
        );
        for (name, f) in [("run_ingress", &ingress), ("run_egress", &egress)] {
            let body = vec![
                "let mut env = Env::new(&[], pkt.payload_offset, &pkt.sm);".to_string(),
                format!("let _ = {f}{{T}}("),
                format!(
                    "    &mut self.rt, &mut env, {ext_arg}&mut pkt.hdr, &mut pkt.meta, &mut pkt.sm,"
                ),
                ");".to_string(),
                "env.store(&mut pkt.sm);".to_string(),
            ];
            let control = if name == "run_ingress" {
                "ingress"
            } else {
                "egress"
            };
            stage.write_fn(
                w,
                &[&format!("/// The {control} control.")],
                name,
                "pkt: &mut Packet",
                "pkt",
                &body,
            );
        }
        let compute_body = vec![
            "let mut env = Env::new(data, pkt.payload_offset, &pkt.sm);".to_string(),
            format!(
                "let _ = {compute}{{T}}(&mut self.rt, &mut env, {ext_arg}&mut pkt.hdr, &mut pkt.meta);"
            ),
            "env.store(&mut pkt.sm);".to_string(),
        ];
        stage.write_fn(
            w,
            &[
                "/// `computeChecksum`; `data` is the packet as parsed (for checksums over",
                "/// the payload).",
            ],
            "run_compute",
            "pkt: &mut Packet, data: &[u8]",
            "pkt, data",
            &compute_body,
        );
        let deparser_body = vec![
            "let mut env = Env::new(data, pkt.payload_offset, &pkt.sm);".to_string(),
            format!("let _ = {deparser}{{T}}(&mut self.rt, &mut env, {ext_arg}out, &mut pkt.hdr);"),
            "env.store(&mut pkt.sm);".to_string(),
        ];
        stage.write_fn(
            w,
            &["/// The deparser, emitting to `out`; `data` as for `run_compute`."],
            "run_deparser",
            "pkt: &mut Packet, data: &[u8], out: &mut PacketOut<'_>",
            "pkt, data, out",
            &deparser_body,
        );
        w.close("}");
        w.line("");
        w.open(format!("impl{generics} Default for {prog_ty} {{"));
        w.open("fn default() -> Self {");
        w.line("Self::new()");
        w.close("}");
        w.close("}");
        w.line("");
        w.open(format!(
            "impl{generics} ::p4_target::pipeline::Pipeline for {prog_ty} {{"
        ));
        w.line("type Packet = Packet;");
        w.open("fn info(&self) -> &'static ::p4_target::info::ProgramInfo {");
        w.line("&PROGRAM_INFO");
        w.close("}");
        w.open("fn runtime(&self) -> &::p4_target::runtime::Runtime {");
        w.line("&self.rt");
        w.close("}");
        w.open("fn runtime_mut(&mut self) -> &mut ::p4_target::runtime::Runtime {");
        w.line("&mut self.rt");
        w.close("}");
        w.open("fn parse(&mut self, data: &[u8], meta: ::p4_target::v1model::StandardMetadata) -> Packet {");
        w.line("let mut pkt = Packet { hdr: Default::default(), meta: Default::default(), sm: meta, payload_offset: 0 };");
        w.line("self.run_parser(data, &mut pkt);");
        w.line("pkt");
        w.close("}");
        // Always inlined: the caller's `meta` is then stored straight into
        // `pkt.sm` from registers; called, the copy reads a struct the caller
        // has just written field by field, which misses store forwarding.
        w.line("#[inline(always)]");
        w.open("fn parse_into(&mut self, data: &[u8], meta: ::p4_target::v1model::StandardMetadata, pkt: &mut Packet) {");
        for line in &hdr_reset {
            w.line(line);
        }
        w.line("pkt.meta = Default::default();");
        w.line("pkt.sm = meta;");
        w.line("pkt.payload_offset = 0;");
        w.line("self.run_parser(data, pkt);");
        w.close("}");
        w.open("fn parse_preserving(&mut self, data: &[u8], meta: ::p4_target::v1model::StandardMetadata, from: &Packet, field_list: u8) -> Packet {");
        w.line("let mut pkt = Packet { sm: meta, ..Default::default() };");
        w.line("Self::preserve_fields(from, &mut pkt, field_list);");
        w.line("self.run_parser(data, &mut pkt);");
        w.line("pkt");
        w.close("}");
        for name in ["ingress", "egress"] {
            w.line("#[inline]");
            w.open(format!("fn {name}(&mut self, pkt: &mut Packet) {{"));
            w.line(format!("self.run_{name}(pkt);"));
            w.close("}");
        }
        w.line("#[inline]");
        w.open("fn deparse(&mut self, pkt: &mut Packet, data: &[u8], out: &mut Vec<u8>) {");
        w.line("out.clear();");
        w.line("self.run_compute(pkt, data);");
        w.line("self.run_deparser(pkt, data, &mut PacketOut::append(out, data));");
        w.line("out.extend_from_slice(&data[pkt.payload_offset.min(data.len())..]);");
        w.close("}");
        w.line("#[inline]");
        w.open("fn deparse_in_place(&mut self, pkt: &mut Packet, frame: &mut Vec<u8>) {");
        w.line("self.run_compute(pkt, frame);");
        w.line("let mut headers = ::core::mem::take(&mut self.headers);");
        if deparser_reads_payload {
            // The deparser reads the payload while it emits: emit aside.
            w.line("headers.clear();");
            w.line("self.run_deparser(pkt, frame, &mut PacketOut::append(&mut headers, frame));");
            w.line("::p4_target::support::replace_headers(frame, pkt.payload_offset, &headers);");
        } else {
            w.line("let mut out = PacketOut::in_place(frame, pkt.payload_offset, &mut headers);");
            w.line("self.run_deparser(pkt, &[], &mut out);");
            w.line("out.finish();");
        }
        w.line("self.headers = headers;");
        w.close("}");
        w.open("fn meta(pkt: &Packet) -> &::p4_target::v1model::StandardMetadata {");
        w.line("&pkt.sm");
        w.close("}");
        w.open("fn meta_mut(pkt: &mut Packet) -> &mut ::p4_target::v1model::StandardMetadata {");
        w.line("&mut pkt.sm");
        w.close("}");
        w.open("fn reset_user_metadata(pkt: &mut Packet) {");
        w.line("pkt.meta = Default::default();");
        w.close("}");
        w.open("fn preserve_fields(from: &Packet, to: &mut Packet, field_list: u8) {");
        let mut lists: std::collections::BTreeMap<u8, Vec<String>> = Default::default();
        if let Some(Ty::Composite(m)) = &self.prog.meta_ty {
            for f in &self.prog.composites[*m].fields {
                for n in &f.field_lists {
                    lists.entry(*n).or_default().push(field_ident(&f.name));
                }
            }
            for (n, fields) in &self.prog.synth_field_lists {
                let entry = lists.entry(*n).or_default();
                for (root, i) in fields {
                    if root == self.prog.meta_ty.as_ref().unwrap_or(&Ty::Void)
                        && let Some(f) = self.prog.composites[*m].fields.get(*i as usize)
                    {
                        entry.push(field_ident(&f.name));
                    }
                }
            }
        }
        w.open("match field_list {");
        for (n, fields) in &lists {
            w.open(format!("{n} => {{"));
            for f in fields {
                w.line(format!("to.meta.{f} = from.meta.{f};"));
            }
            w.close("}");
        }
        w.line("_ => {}");
        w.close("}");
        w.close("}");
        w.close("}");
        Ok(())
    }

    /// Whether the top-level instance of control `c` (the deparser) or a
    /// control it applies reads the payload (a `*_with_payload` checksum).
    fn deparser_reads_payload(&self, c: Handle<Control>) -> bool {
        let readers = self.payload_readers.borrow();
        let mut todo: Vec<usize> = self
            .prog
            .instances
            .iter()
            .position(|i| i.control == c && !i.path.contains('.'))
            .into_iter()
            .collect();
        while let Some(i) = todo.pop() {
            if readers.contains(&i) {
                return true;
            }
            todo.extend(self.prog.instances[i].sub.iter().map(|&s| s as usize));
        }
        false
    }
}

/// How a stage entry point runs its generated functions: directly, or
/// (with trace points) their traced or untraced instance by `rt.trace.on`.
struct StageCall {
    /// Generic arguments of the generated functions inside a stage
    /// function: `::<TRACE>` (or `::<_, TRACE>`), empty without trace points.
    inner: String,
}

impl StageCall {
    /// `fn {name}(&mut self, {sig})` running `body`, whose lines call the
    /// generated functions with `{T}` in place of their generic arguments.
    /// With trace points it runs `{name}_as::<true>` (out of line, in a
    /// cold function) or `{name}_as::<false>`: the untraced packet's code is
    /// then exactly the `--no-trace-points` build's, inlined as if alone.
    fn write_fn(
        &self,
        w: &mut CodeWriter,
        doc: &[&str],
        name: &str,
        sig: &str,
        args: &str,
        body: &[String],
    ) {
        for d in doc {
            w.line(*d);
        }
        w.line("#[inline]");
        w.open(format!("fn {name}(&mut self, {sig}) {{"));
        let write_body = |w: &mut CodeWriter| {
            for l in body.iter().filter(|l| !l.is_empty()) {
                w.line(l.replace("{T}", &self.inner));
            }
        };
        if self.inner.is_empty() {
            write_body(w);
            w.close("}");
            w.line("");
            return;
        }
        w.open("if self.rt.trace.on {");
        w.line(format!(
            "::p4_target::support::cold(move || self.{name}_as::<true>({args}));"
        ));
        w.reopen("} else {");
        w.line(format!("self.{name}_as::<false>({args});"));
        w.close("}");
        w.close("}");
        w.line("");
        w.line(format!(
            "/// [`Self::{name}`], with trace points if `TRACE`."
        ));
        w.line("#[inline]");
        w.open(format!(
            "fn {name}_as<const TRACE: bool>(&mut self, {sig}) {{"
        ));
        write_body(w);
        w.close("}");
        w.line("");
    }
}
