//! The lease rules against an injected clock.

use super::*;

fn rules(liveness: LivenessMode) -> LeaseRules {
    LeaseRules {
        duration_ms: 120_000,
        sweep_ms: 30_000,
        liveness,
    }
}

fn alive(cpu: bool, talked: bool) -> Observation {
    Observation {
        process: Liveness::Alive,
        cpu_advanced: cpu,
        talked,
        waiting: false,
        idle: false,
        typed: false,
    }
}

#[test]
fn a_lease_lapses_exactly_at_its_expiry() {
    let clock = ManualClock::new(1_000);
    let r = rules(LivenessMode::Activity);
    let exp = r.expiry(clock.now_ms());
    clock.advance(119_999);
    assert!(!r.lapsed(exp, clock.now_ms()));
    clock.advance(1);
    assert!(r.lapsed(exp, clock.now_ms()));
}

#[test]
fn the_sweep_names_why_it_renews() {
    let r = rules(LivenessMode::Activity);
    let obs = Observation {
        process: Liveness::Alive,
        cpu_advanced: true,
        talked: false,
        waiting: false,
        idle: false,
        typed: false,
    };
    assert_eq!(r.sweep_verdict(&obs), Verdict::Renew);
    assert_eq!(r.renew_cause(&obs), "CPU");
    let typed = Observation { typed: true, ..obs };
    assert_eq!(r.renew_cause(&typed), "input");
    let waiting = Observation {
        waiting: true,
        process: Liveness::Stopped,
        ..obs
    };
    assert_eq!(r.renew_cause(&waiting), "waiting for a person");
    let p = rules(LivenessMode::Process);
    let quiet = Observation {
        cpu_advanced: false,
        ..obs
    };
    assert_eq!(p.renew_cause(&quiet), "process alive");
}

#[test]
fn a_renewal_source_is_logged_once_per_lease() {
    let r = rules(LivenessMode::Activity);
    assert!(r.renew_log_due(None, 0));
    assert!(!r.renew_log_due(Some(1_000), 1_000 + 119_999));
    assert!(r.renew_log_due(Some(1_000), 1_000 + 120_000));
    assert!(r.renew_log_due(Some(1_000), 500), "the clock went back");
}

#[test]
fn renewal_writes_are_coalesced_to_one_per_slack() {
    let clock = ManualClock::new(0);
    let r = rules(LivenessMode::Activity);
    assert!(r.renewal_due(None, clock.now_ms()));
    let written = clock.now_ms();
    let mut writes = 0;
    for _ in 0..1000 {
        clock.advance(10);
        if r.renewal_due(Some(written), clock.now_ms()) {
            writes += 1;
        }
    }
    assert_eq!(writes, 0, "10 s of reads after a write need no other write");
    clock.advance(r.renew_slack_ms());
    assert!(r.renewal_due(Some(written), clock.now_ms()));
}

#[test]
fn the_sweep_expels_the_dead_and_holds_the_stopped() {
    let r = rules(LivenessMode::Process);
    let gone = Observation {
        process: Liveness::Gone,
        ..alive(true, true)
    };
    let zombie = Observation {
        process: Liveness::Zombie,
        ..alive(true, true)
    };
    let stopped = Observation {
        process: Liveness::Stopped,
        ..alive(true, true)
    };
    assert!(matches!(r.sweep_verdict(&gone), Verdict::Expel(_)));
    assert!(matches!(r.sweep_verdict(&zombie), Verdict::Expel(_)));
    assert_eq!(r.sweep_verdict(&stopped), Verdict::NoRenew);
    // Rule 12: a waiting session keeps its claims while its process lives, stopped or not.
    let waiting_but_stopped = Observation {
        waiting: true,
        ..stopped
    };
    assert_eq!(r.sweep_verdict(&waiting_but_stopped), Verdict::Renew);
    let waiting_and_gone = Observation {
        waiting: true,
        ..gone
    };
    assert!(matches!(
        r.sweep_verdict(&waiting_and_gone),
        Verdict::Expel(_)
    ));
}

fn tick(boot_ms: i64, mono_ms: i64) -> Tick {
    Tick { boot_ms, mono_ms }
}

#[test]
fn a_late_look_at_the_clocks_is_a_stall_and_says_how_much_was_suspend() {
    let r = rules(LivenessMode::Activity);
    assert_eq!(r.stall_threshold_ms(), 10_000);
    // Ticks 100 ms apart, or a few seconds late: no stall.
    assert_eq!(r.stall(tick(0, 0), tick(100, 100)), None);
    assert_eq!(r.stall(tick(0, 0), tick(9_000, 9_000)), None);
    // SIGSTOP of the board for 30 s: both clocks ran.
    assert_eq!(
        r.stall(tick(0, 0), tick(30_000, 30_000)),
        Some(Stall {
            ms: 30_000,
            suspended_ms: 0
        })
    );
    // Machine suspended for 10 min: only boot time ran.
    assert_eq!(
        r.stall(tick(1_000, 1_000), tick(601_100, 1_100)),
        Some(Stall {
            ms: 600_100,
            suspended_ms: 600_000
        })
    );
    let short = LeaseRules {
        duration_ms: 1_000,
        sweep_ms: 100,
        liveness: LivenessMode::Activity,
    };
    assert_eq!(short.stall_threshold_ms(), 1_000);
}

#[test]
fn a_stall_does_not_count_against_a_lease_and_leaves_one_sweep_of_grace() {
    let r = rules(LivenessMode::Activity);
    let clock = ManualClock::new(0);
    let exp = r.expiry(clock.now_ms()); // 120 s
                                        // 50 s into the lease the board stops for 300 s (more than 2 leases).
    clock.advance(350_000);
    let stall = Stall {
        ms: 300_000,
        suspended_ms: 0,
    };
    let after = r.expiry_after_stall(exp, clock.now_ms(), stall);
    assert_eq!(after, exp + stall.ms, "the lease keeps its 70 s left");
    assert!(!r.lapsed(after, clock.now_ms()));
    // A claim that was about to lapse gets one sweep to show its holder is alive.
    let nearly = r.expiry_after_stall(clock.now_ms() - stall.ms + 1, clock.now_ms(), stall);
    assert_eq!(nearly, clock.now_ms() + r.sweep_ms);
    // Never earlier than it was.
    let none = Stall {
        ms: 0,
        suspended_ms: 0,
    };
    assert!(r.expiry_after_stall(exp, 0, none) >= exp);
}

#[test]
fn activity_mode_needs_progress_process_mode_does_not() {
    let act = rules(LivenessMode::Activity);
    let proc_ = rules(LivenessMode::Process);
    assert_eq!(act.sweep_verdict(&alive(false, false)), Verdict::NoRenew);
    assert_eq!(act.sweep_verdict(&alive(true, false)), Verdict::Renew);
    assert_eq!(act.sweep_verdict(&alive(false, true)), Verdict::Renew);
    assert_eq!(proc_.sweep_verdict(&alive(false, false)), Verdict::Renew);
}

#[test]
fn waiting_for_a_human_renews_without_activity() {
    let r = rules(LivenessMode::Activity);
    let w = Observation {
        waiting: true,
        ..alive(false, false)
    };
    assert_eq!(r.sweep_verdict(&w), Verdict::Renew);
}

#[test]
fn a_finished_turn_is_not_renewed_by_cpu_and_is_nudged_once_then_lapses() {
    let clock = ManualClock::new(0);
    let r = LeaseRules {
        duration_ms: 2_000,
        sweep_ms: 200,
        liveness: LivenessMode::Activity,
    };
    let idle_busy = Observation {
        idle: true,
        ..alive(true, false)
    };
    // The hook that said "idle" was a call: that sweep renews, and nudges.
    let expiry = r.expiry(clock.now_ms());
    assert_eq!(
        r.sweep_verdict(&Observation {
            talked: true,
            ..idle_busy
        }),
        Verdict::Renew
    );
    assert!(r.nudge_due(&idle_busy, true, false));
    // Then CPU alone, sweep after sweep: never renewed, nudged no more, lapsed one lease on.
    for _ in 0..10 {
        clock.advance(r.sweep_ms);
        assert_eq!(r.sweep_verdict(&idle_busy), Verdict::NoRenew);
        assert!(!r.nudge_due(&idle_busy, true, true));
    }
    assert!(r.lapsed(expiry, clock.now_ms()));
    // Also in `process` mode: a finished turn is no longer progress.
    let proc_ = rules(LivenessMode::Process);
    assert_eq!(proc_.sweep_verdict(&idle_busy), Verdict::NoRenew);
    // Acting renews: a board call or input in its terminal.
    let typed = Observation {
        typed: true,
        ..idle_busy
    };
    assert_eq!(r.sweep_verdict(&typed), Verdict::Renew);
    // Not nudged: holding nothing, waiting for a human, or still working.
    assert!(!r.nudge_due(&idle_busy, false, false));
    let asking = Observation {
        waiting: true,
        ..idle_busy
    };
    assert!(!r.nudge_due(&asking, true, false));
    assert_eq!(r.sweep_verdict(&asking), Verdict::Renew);
    assert!(!r.nudge_due(&alive(true, false), true, false));
}

#[test]
fn exit_reasons_read_like_the_design() {
    assert_eq!(exit_reason(Some(3), None), "exited (status 3)");
    assert_eq!(exit_reason(None, Some(9)), "killed by SIGKILL");
}
