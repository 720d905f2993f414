//! Fuzz target: any UTF-8 text through the whole front end (preprocessor,
//! lexer, parser) and diagnostic rendering. The front end must never panic;
//! it must reject or accept, and an accepted program has no errors.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = p4_compiler::front::parse_source("fuzz.p4", text);
    assert_eq!(parsed.program.is_none(), parsed.has_errors());
    let _ = parsed.render();
});
