//! Arbitrary bytes as a pcap/pcapng file: the reader must return packets or an error, never panic, and
//! every packet it returns must survive the checked packet parsers, whole and as a split packet's head.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(reader) = traffic::TraceReader::from_reader("fuzz", std::io::Cursor::new(data.to_vec())) else { return };
    for packet in reader {
        let Ok(packet) = packet else { break };
        if let Ok(view) = wire::PacketView::new_checked(&packet.data[..]) {
            let _ = (view.five_tuple(), view.payload());
        }
        // The same bytes as the head of a split packet (nicmem's header/data split).
        let head = &packet.data[..packet.data.len().min(64)];
        if let Ok(view) = wire::PacketView::new_checked_head(head, packet.data.len()) {
            let _ = (view.five_tuple(), view.payload());
        }
    }
});
