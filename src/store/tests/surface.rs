//! The rest of the surface on every backend: the goal, meta and recorded events, the lease
//! calls around a claim (renewals, checks, expiries, grace), and an agent session's life
//! (attached processes, terminal, idle, contact, end).

use super::*;

on_every_backend! {
    fn the_goal_meta_and_a_recorded_event_read_back_as_written(s) {
        assert_eq!(s.goal().unwrap(), None);
        s.set_goal("ship it", OPERATOR).unwrap();
        assert_eq!(s.goal().unwrap().unwrap().text, "ship it");
        s.set_meta("k", "v1").unwrap();
        s.set_meta("k", "v2").unwrap();
        assert_eq!(s.meta("k").unwrap().as_deref(), Some("v2"));
        assert_eq!(s.meta("missing").unwrap(), None);
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let ev = s.record(EventKind::Warn, Some(t.id), None, None, "look").unwrap();
        assert_eq!(ev.len(), 1);
        assert_eq!(s.last_event_id().unwrap(), ev[0].id);
        assert_eq!(s.recent_events(1).unwrap()[0].reason.as_deref(), Some("look"));
        assert!(s.task_events(t.id).unwrap().iter().any(|e| e.id == ev[0].id));
        assert!(!s.events_waiting());
        assert_eq!(s.integrity_check().unwrap(), "ok");
    }
}

on_every_backend! {
    fn renewals_checks_and_grace_move_only_live_claims(s) {
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let (u, _) = s.add_task("u", "", 0, &[], OPERATOR, 0).unwrap();
        assert_eq!(s.unfinished_count().unwrap(), 2);
        assert_eq!(s.ready_tasks(0, None).unwrap().len(), 2);
        let a = agent(s, "claude");
        let (c, _) = s.claim(&a, Some(t.id), Lease::until(0, 1000)).unwrap();
        assert_eq!(s.ready_tasks(0, None).unwrap().len(), 1);
        assert_eq!(s.live_claims(&a).unwrap(), vec![c.claim.clone()]);
        assert_eq!(s.earliest_expiry().unwrap(), Some(1000));
        assert!(!s.any_due(500).unwrap());
        assert!(s.any_due(1000).unwrap());
        let renewed = s.renew(&a, Lease::until(500, 1500)).unwrap();
        assert_eq!(renewed[0].expires_ms, 1500);
        let checked = s.renew_checked(&a, Lease::until(600, 1600)).unwrap();
        assert_eq!(checked[0].expires_ms, 1600);
        assert_eq!(s.renew_many(&[a.as_str()], Lease::until(700, 1700)).unwrap(), vec![a.clone()]);
        let info = s.check(&a, Some(t.id), Some(c.claim.generation), 800).unwrap();
        assert_eq!(info.expires_ms, 1700);
        s.grace_session(&a, 5000).unwrap();
        assert_eq!(s.earliest_expiry().unwrap(), Some(5000));
        assert!(s.lapse_due(1800, 1000).unwrap().is_empty(), "grace kept the claim");
        let (page, next) = s.list_page(None, TaskId(0), Some(1), 0).unwrap();
        assert_eq!((page.len(), next), (1, Some(t.id)));
        let (cancelled, _) = s.cancel_task(u.id, OPERATOR, 0).unwrap();
        assert_eq!(cancelled.state, TaskState::Cancelled);
        assert_eq!(s.unfinished_count().unwrap(), 1);
    }
}

on_every_backend! {
    fn a_finished_task_reopens_keeping_its_generation_and_an_open_one_is_refused(s) {
        let (t, _) = s.add_task("reopen me", "", 0, &[], OPERATOR, 0).unwrap();
        let e = s.reopen_task(t.id, OPERATOR, 0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict, "{e:?}");
        s.cancel_task(t.id, OPERATOR, 0).unwrap();
        let (open, ev) = s.reopen_task(t.id, OPERATOR, 0).unwrap();
        assert_eq!((open.state, open.generation), (TaskState::Open, t.generation));
        assert!(ev.iter().any(|e| e.reason.as_deref() == Some("reopened")), "{ev:?}");
        assert_eq!(s.unfinished_count().unwrap(), 1);
        assert_eq!(s.reopen_task(TaskId(999), OPERATOR, 0).unwrap_err().kind, ErrorKind::NotFound);
    }
}

on_every_backend! {
    fn a_session_s_processes_terminal_idleness_and_end_are_remembered(s) {
        let a = agent(s, "claude");
        s.attach_session(&a, (4242, 7), Some(("%3", 4243, 8))).unwrap();
        let row = s.session(&a).unwrap().unwrap();
        assert_eq!(row.agent, Some((4242, 7)));
        assert_eq!(s.sessions_with_pids("boot", &[4242]).unwrap().len(), 1);
        assert!(s.sessions_with_pids("boot", &[1]).unwrap().is_empty());
        assert_eq!(s.live_sessions().unwrap().len(), 1);
        let listed = s.sessions(None, &|_| None).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, a);
        s.set_session_tty(&a, "/dev/pts/3").unwrap();
        assert_eq!(s.session_tty(&a).unwrap().as_deref(), Some("/dev/pts/3"));
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        s.claim(&a, Some(t.id), Lease::until(0, 1000)).unwrap();
        let live = s.live_claims_with_tty().unwrap();
        assert_eq!(live[0].tty.as_deref(), Some("/dev/pts/3"));
        assert!(s.mark_contacted(&a).unwrap());
        assert!(!s.mark_contacted(&a).unwrap(), "contact is marked once");
        let (changed, _) = s.set_idle(&a, Some("turn over")).unwrap();
        assert!(changed);
        assert!(s.session(&a).unwrap().unwrap().idle_since.is_some());
        assert_eq!(s.ended_session_count().unwrap(), 0);
        s.expel_session(&a, "gone").unwrap();
        assert!(s.session_end_reason(&a).unwrap().unwrap().contains("gone"));
        assert_eq!(s.ended_session_count().unwrap(), 1);
        assert!(s.live_sessions().unwrap().is_empty());
    }
}

on_every_backend! {
    fn a_board_s_stall_moves_its_own_lease_clock_only_and_a_retried_op_is_applied_once(s) {
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let a = agent(s, "claude");
        s.claim(&a, Some(t.id), Lease::until(0, 1000)).unwrap();
        let ev = s.extend_after_stall(3000, 2000, "suspended").unwrap();
        if s.describe().kind == "sqlite" {
            assert_eq!(ev[0].kind, EventKind::Stall);
            assert_eq!(s.earliest_expiry().unwrap(), Some(4000));
        } else {
            // A shared store's leases run on the server's clock, which one board's stall
            // does not stop: nothing moves.
            assert!(ev.is_empty());
            assert_eq!(s.earliest_expiry().unwrap(), Some(1000));
        }
        let mut add = |s: &mut dyn Store| -> answers::Answer {
            let (t, _) = s.add_task("once", "", 0, &[], OPERATOR, 0)?;
            Ok(serde_json::json!({ "task": t.id }))
        };
        let first = s.with_op(OPERATOR, "op-1", &mut add).unwrap().unwrap();
        let again = s.with_op(OPERATOR, "op-1", &mut add).unwrap().unwrap();
        assert_eq!(first, again);
        assert_eq!(s.unfinished_count().unwrap(), 2);
    }
}

on_every_backend! {
    fn a_store_describes_itself_and_only_a_shared_one_keeps_hosts(s) {
        let info = s.describe();
        s.set_notify(Box::new(|_| {}));
        let beat = s.host_beat(1000, 5000).unwrap();
        assert_eq!(beat.ended_by_others, None);
        assert!(s.end_dead_hosts().unwrap().is_empty());
        if info.kind == "sqlite" {
            assert_eq!(s.clock_ms().unwrap(), None);
            assert!(s.hosts().unwrap().is_empty(), "one host, no host sessions");
        } else {
            assert!(s.clock_ms().unwrap().is_some());
            assert_eq!(s.hosts().unwrap().len(), 1, "this board's own host session");
        }
        s.mark_clean_stop().unwrap();
    }
}

on_every_backend! {
    fn a_clean_stop_ends_a_shared_stores_host_and_expels_its_claims(s) {
        let shared = s.describe().kind != "sqlite";
        s.host_beat(60_000, 30_000).unwrap();
        let (t, _) = s.add_task("t", "", 0, &[], OPERATOR, 0).unwrap();
        let a = agent(s, "claude");
        s.claim(&a, Some(t.id), Lease::until(0, 60_000)).unwrap();
        let ev = s.end_host("stopped by `board stop`").unwrap();
        if shared {
            let expel = ev.iter().find(|e| e.kind == EventKind::Expel && e.task == Some(t.id));
            assert!(expel.is_some(), "the host's claim is expelled at once: {ev:?}");
            assert_eq!(s.task(t.id, 0).unwrap().holder, None);
            assert!(s.end_host("again").unwrap().is_empty(), "an ended host ends once");
        } else {
            assert!(ev.is_empty(), "one host: its agent sessions outlive the board");
            assert_eq!(s.task(t.id, 0).unwrap().holder.as_deref(), Some(a.as_str()));
        }
    }
}

on_every_backend! {
    fn an_exported_backlog_imports_as_new_tasks_with_its_goal(s) {
        s.add_task("one", "", 0, &[], OPERATOR, 0).unwrap();
        s.add_task("two", "", 0, &[], OPERATOR, 0).unwrap();
        let tasks = s.list_tasks(None, 0).unwrap();
        let backlog = crate::proto::backlog::Backlog::of_board(Some("the goal".into()), &tasks);
        let (imported, _) = s.import(&backlog, OPERATOR).unwrap();
        assert_eq!(imported.ids.len(), 2);
        assert!(imported.goal_set);
        assert_eq!(s.goal().unwrap().unwrap().text, "the goal");
        assert_eq!(s.unfinished_count().unwrap(), 4);
    }
}
