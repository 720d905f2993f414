#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| roceswitch_fuzz::mac_pfc(data));
