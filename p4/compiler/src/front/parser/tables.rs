//! Tables: properties, keys, action references and `entries` (P4_16 §14.2).

use crate::diag::Span;
use crate::front::ast::*;

use super::{PResult, Parser};

impl Parser<'_> {
    pub(super) fn table(&mut self, annotations: Vec<Annotation>, start: Span) -> PResult<Decl> {
        self.bump(); // table
        let name = self.name("a table name")?;
        // p4c still accepts the empty parameter list of early P4_16 drafts
        // (`table t() { .. }`); tables never take parameters.
        if self.at("(") {
            self.bump();
            self.expect(")")?;
        }
        let (properties, _) = self.braced(Self::table_property)?;
        Ok(Decl::Table(TableDecl {
            annotations,
            name,
            properties,
            span: start.to(self.prev_span),
        }))
    }

    pub(super) fn table_property(&mut self) -> PResult<TableProperty> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let is_const = self.eat_word("const");
        let name = self.ident_any("a table property")?;
        self.expect("=")?;
        let kind = match name.name.as_str() {
            "key" => {
                let (elems, _) = self.braced(Self::key_element)?;
                self.eat(";");
                TablePropertyKind::Key(elems)
            }
            "actions" => {
                let (refs, _) = self.braced(|p| {
                    let rstart = p.peek().span;
                    let annotations = p.annotations()?;
                    let r = p.action_ref(annotations, rstart)?;
                    p.expect_semi("the action reference")?;
                    Ok(r)
                })?;
                self.eat(";");
                TablePropertyKind::Actions(refs)
            }
            "entries" => {
                let (entries, _) = self.braced(Self::entry)?;
                self.eat(";");
                TablePropertyKind::Entries(entries)
            }
            other => {
                let value = self.expr()?;
                self.expect_semi(&format!("table property `{other}`"))?;
                match other {
                    "default_action" => TablePropertyKind::DefaultAction(value),
                    "size" => TablePropertyKind::Size(value),
                    "implementation" => TablePropertyKind::Implementation(value),
                    "counters" => TablePropertyKind::Counters(value),
                    "meters" => TablePropertyKind::Meters(value),
                    "support_timeout" => TablePropertyKind::SupportTimeout(value),
                    _ => TablePropertyKind::Custom { name, value },
                }
            }
        };
        Ok(TableProperty {
            annotations,
            is_const,
            kind,
            span: start.to(self.prev_span),
        })
    }

    pub(super) fn key_element(&mut self) -> PResult<KeyElement> {
        let start = self.peek().span;
        let mut annotations = self.annotations()?;
        let expr = self.expr()?;
        self.expect(":")?;
        let match_kind = self.ident_any("a match kind")?;
        annotations.extend(self.annotations()?);
        self.expect_semi("the key element")?;
        Ok(KeyElement {
            annotations,
            expr,
            match_kind,
            span: start.to(self.prev_span),
        })
    }

    pub(super) fn action_ref(
        &mut self,
        annotations: Vec<Annotation>,
        start: Span,
    ) -> PResult<ActionRef> {
        let name = self.path_name("an action name")?;
        let args = if self.at("(") {
            Some(self.args()?)
        } else {
            None
        };
        Ok(ActionRef {
            annotations,
            name,
            args,
            span: start.to(self.prev_span),
        })
    }

    pub(super) fn entry(&mut self) -> PResult<TableEntry> {
        let start = self.peek().span;
        let mut is_const = self.eat_word("const");
        let mut annotations = self.annotations()?;
        is_const |= self.eat_word("const");
        let priority = if self.at_word("priority") && self.is_punct_at(1, "=") {
            self.bump();
            self.bump();
            let p = self.expr()?;
            self.expect(":")?;
            Some(p)
        } else {
            None
        };
        let keyset = self.keyset()?;
        self.expect(":")?;
        let astart = self.peek().span;
        let action = self.action_ref(Vec::new(), astart)?;
        annotations.extend(self.annotations()?);
        self.expect_semi("the table entry")?;
        Ok(TableEntry {
            annotations,
            is_const,
            priority,
            keyset,
            action,
            span: start.to(self.prev_span),
        })
    }
}
