//! Loom model of reactive notifications (Ensō §4.2, Figure 5): the NIC's arrival handler and the update
//! handler race on a pipe's state word while the core consumes notifications and frees bytes. Property:
//! every byte written is eventually notified; once the NIC stops, the core learns every message through
//! notifications alone, and Head_SW reaches Tail_NIC.

use super::mirror::{Mirror, page_size};
use super::notif::rx_notification_buffer;
use super::pipe::{Framing, PipeNic, PipeShared, PipeSw};
use crate::probe::CountingProbe;
use crate::ringsize::RingSize;

/// The core's loop body: take notifications, read what they announce, free it (which may answer with a
/// notification). Returns the messages read.
fn consume(sw: &mut PipeSw, notif: &mut super::notif::RxNotifSw, p: &mut CountingProbe) -> usize {
    let mut read = 0;
    while let Some((_, tail)) = notif.next(p) {
        sw.notified(tail);
        while sw.next_message(p).is_some() {
            read += 1;
        }
        let (_, to, _) = sw.positions();
        if let Some(tail) = sw.free_to(p, to, true) {
            notif.answer((0, tail), 0);
        }
        notif.ring_doorbell(p);
    }
    read
}

#[test]
fn loom_reactive_notifications_never_lose_data() {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(|| {
        let shared = PipeShared::new(Mirror::new(page_size()).unwrap());
        let mut nic = PipeNic::new(shared.clone());
        let mut sw = PipeSw::new(shared);
        let (mut nic_notif, mut sw_notif) = rx_notification_buffer(RingSize::new(2).unwrap(), 1);
        let core = loom::thread::spawn(move || {
            let p = &mut CountingProbe::default();
            let mut read = 0;
            for _ in 0..2 {
                read += consume(&mut sw, &mut sw_notif, p);
                loom::thread::yield_now();
            }
            (sw, sw_notif, read)
        });
        let p = &mut CountingProbe::default();
        for i in 0..3u8 {
            let a = nic.arrive(p, &[i; 60], Framing::default()).expect("room");
            if a.was_idle {
                assert!(nic_notif.push(p, (0, a.tail)), "one outstanding notification per pipe");
            }
        }
        let (mut sw, mut sw_notif, mut read) = core.join().unwrap();
        read += consume(&mut sw, &mut sw_notif, p);
        assert_eq!(read, 3, "a message was never notified");
        assert_eq!(sw.positions().0, nic.tail(), "Head_SW reached Tail_NIC");
    });
}
