#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roceswitch_fuzz::roce_header(data));
