//! The review contract on every backend: a holder's `done` into review ends its claim, and each
//! verdict is conditional on the task being in review at the commit the reviewer saw.

use super::*;

const C1: &str = "1111111111111111111111111111111111111111";
const C2: &str = "2222222222222222222222222222222222222222";

/// A task claimed by a fresh agent session `name`: (task id, agent, generation).
fn claimed(s: &mut dyn Store, name: &str) -> (TaskId, String, Generation) {
    let (t, _) = s.add_task("land me", "", 0, &[], OPERATOR, 0).unwrap();
    let a = agent(s, name);
    let (c, _) = s.claim(&a, Some(t.id), Lease::until(0, 1000)).unwrap();
    (t.id, a, c.claim.generation)
}

on_every_backend! {
    fn done_into_review_ends_the_claim_and_keeps_the_commit(s) {
        let (t, a, g) = claimed(s, "claude");
        let (out, ev) = s
            .submit_for_review(&a, t, Some(g), C1, Some("ready"), true, 10)
            .unwrap();
        assert_eq!(out.task.state, TaskState::Review);
        assert_eq!(out.task.commit.as_deref(), Some(C1));
        assert_eq!(out.task.landed, None);
        assert_eq!(out.task.holder, None, "no lease runs during review");
        assert!(!out.already);
        assert_eq!(kinds(&ev), vec![EventKind::Review]);
        assert!(ev[0].reason.as_deref().unwrap_or("").contains(C1));

        let (again, ev) = s
            .submit_for_review(&a, t, Some(g), C1, None, true, 20)
            .unwrap();
        assert!(again.already, "a repeated done into review is answered, not applied");
        assert!(ev.is_empty());

        let facts = s.review_facts(t).unwrap();
        assert_eq!(facts.done_by.as_deref(), Some(a.as_str()));
        assert_eq!(facts.done_generation, Some(g.0));
        assert_eq!(facts.commit.as_deref(), Some(C1));
    }
}

on_every_backend! {
    fn an_accept_finishes_the_task_with_where_it_landed(s) {
        let (t, a, g) = claimed(s, "claude");
        s.submit_for_review(&a, t, None, C1, None, true, 10).unwrap();
        let reviewer = agent(s, "reviewer");
        let (view, ev) = s
            .accept_review(t, C1, Some(&reviewer), Some(C2), Some("good"), 20)
            .unwrap();
        assert_eq!(view.state, TaskState::Done);
        assert_eq!(view.landed.as_deref(), Some(C2));
        assert_eq!(view.commit.as_deref(), Some(C1));
        assert_eq!(kinds(&ev), vec![EventKind::Accept, EventKind::Land]);
        assert_eq!(ev[0].generation, Some(g));
        assert!(ev[1].reason.as_deref().unwrap_or("").contains(C2));
        let notes = s.notes(t).unwrap();
        assert_eq!(notes.last().map(|n| n.author.as_str()), Some(reviewer.as_str()));

        // A second verdict finds nothing in review and changes nothing.
        let e = s.accept_review(t, C1, None, Some(C2), None, 30).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict, "{e:?}");
        assert!(e.message.contains("is done"), "{}", e.message);
        let e = s.send_back(t, C1, None, "too late", 30).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict, "{e:?}");
        assert_eq!(s.task(t, 40).unwrap().state, TaskState::Done);
    }
}

on_every_backend! {
    fn the_last_holder_never_reviews_its_own_work(s) {
        let (t, a, _) = claimed(s, "claude");
        s.submit_for_review(&a, t, None, C1, None, true, 10).unwrap();
        let e = s.accept_review(t, C1, Some(&a), None, None, 20).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unauthorized, "{e:?}");
        assert!(e.message.contains("last holder"), "{}", e.message);
        let e = s.send_back(t, C1, Some(&a), "mine", 20).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unauthorized, "{e:?}");
        assert_eq!(s.task(t, 30).unwrap().state, TaskState::Review);
    }
}

on_every_backend! {
    fn a_verdict_on_another_commit_than_the_one_in_review_changes_nothing(s) {
        let (t, a, _) = claimed(s, "claude");
        s.submit_for_review(&a, t, None, C1, None, true, 10).unwrap();
        let e = s.accept_review(t, C2, None, None, None, 20).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict, "{e:?}");
        assert!(e.message.contains(C2) && e.message.contains(C1), "{}", e.message);
        assert_eq!(s.task(t, 30).unwrap().state, TaskState::Review);
    }
}

on_every_backend! {
    fn a_done_that_skips_review_logs_done_not_a_wait_for_review(s) {
        // Review off on the board, no override: the task lands at once, never waits.
        let (t, a, g) = claimed(s, "claude");
        let (out, ev) = s.submit_for_review(&a, t, None, C1, None, false, 10).unwrap();
        assert_eq!(out.task.state, TaskState::Review, "in review until the board lands it");
        assert_eq!(kinds(&ev), vec![EventKind::Done]);
        assert_eq!(ev[0].agent.as_deref(), Some(a.as_str()));
        assert_eq!(ev[0].generation, Some(g));
        assert!(ev[0].reason.as_deref().unwrap_or("").contains("skips review"));
        // Its generation still counts as finished by its holder (rule 15 after a conflict).
        assert_eq!(s.review_facts(t).unwrap().finished_generations, vec![g.0]);
        let (_, ev) = s.accept_review(t, C1, None, Some(C2), None, 20).unwrap();
        assert_eq!(kinds(&ev), vec![EventKind::Accept, EventKind::Land]);

        // A task's own --review wins over the board's default.
        let (t, _) = s
            .add_task_for("reviewed", "", 0, &[], &[], None, Some(true), OPERATOR, 30)
            .unwrap();
        let (c, _) = s.claim(&a, Some(t.id), Lease::until(30, 1000)).unwrap();
        let g = c.claim.generation;
        let (_, ev) = s.submit_for_review(&a, t.id, None, C1, None, false, 40).unwrap();
        assert_eq!(kinds(&ev), vec![EventKind::Review]);
        assert_eq!(ev[0].generation, Some(g));
    }
}

on_every_backend! {
    fn a_task_that_did_not_land_after_skipping_review_is_logged_as_waiting(s) {
        let (t, a, g) = claimed(s, "claude");
        s.submit_for_review(&a, t, None, C1, None, false, 10).unwrap();
        // At another commit: nothing waits there, nothing is said.
        assert!(s.left_in_review(t, C2, "why", 20).unwrap().is_empty());
        let ev = s.left_in_review(t, C1, "main is dirty", 20).unwrap();
        assert_eq!(kinds(&ev), vec![EventKind::Review]);
        assert_eq!(ev[0].agent.as_deref(), Some(a.as_str()));
        assert_eq!(ev[0].generation, Some(g));
        assert!(ev[0].reason.as_deref().unwrap_or("").contains("main is dirty"));
        assert_eq!(s.task(t, 20).unwrap().state, TaskState::Review);
        // Sent back to ready: no longer waiting, nothing said.
        s.send_back(t, C1, None, "conflict", 30).unwrap();
        assert!(s.left_in_review(t, C1, "why", 40).unwrap().is_empty());
    }
}

on_every_backend! {
    fn a_reject_sends_the_task_back_to_ready_with_the_note(s) {
        let (t, a, g) = claimed(s, "claude");
        s.submit_for_review(&a, t, None, C1, None, true, 10).unwrap();
        let (view, ev) = s.send_back(t, C1, None, "tests fail on main", 20).unwrap();
        assert_eq!(view.state, TaskState::Open);
        assert!(view.ready);
        assert_eq!(view.commit, None);
        assert_eq!(kinds(&ev), vec![EventKind::Rejected]);
        assert_eq!(ev[0].generation, Some(g));
        let notes = s.notes(t).unwrap();
        assert_eq!(notes.last().map(|n| n.text.as_str()), Some("tests fail on main"));
        assert_eq!(notes.last().map(|n| n.author.as_str()), Some(OPERATOR));

        // Claimed again, at a newer generation.
        let (c, _) = s.claim(&a, Some(t), Lease::until(30, 1000)).unwrap();
        assert_eq!(c.claim.generation, Generation(g.0 + 1));
    }
}

on_every_backend! {
    fn done_into_review_is_fenced_like_done(s) {
        let (t, a, g) = claimed(s, "claude");
        // The lease (expiry 1000) has passed: refused, and the task is not in review.
        let e = s
            .submit_for_review(&a, t, Some(g), C1, None, true, 2000)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Lapsed, "{e:?}");
        let view = s.task(t, 2000).unwrap();
        assert_eq!(view.state, TaskState::Open);
        assert_eq!(view.commit, None);
        // A commit that is not a full id is refused before anything is read.
        let e = s
            .submit_for_review(&a, t, None, "HEAD", None, true, 2000)
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Invalid, "{e:?}");
    }
}

on_every_backend! {
    fn a_tasks_review_override_is_kept_changed_by_an_edit_and_answered_at_once(s) {
        let (t, _) = s
            .add_task_for("reviewed", "", 0, &[], &[], None, Some(true), OPERATOR, 0)
            .unwrap();
        assert_eq!(t.review, Some(true));
        assert_eq!(s.task(t.id, 0).unwrap().review, Some(true));
        let (plain, _) = s.add_task("as the board says", "", 0, &[], OPERATOR, 0).unwrap();
        assert_eq!(plain.review, None);

        let skip = Reassign { review: Some(false), ..Reassign::default() };
        let (t, _) = s.edit_task(t.id, None, None, None, None, &skip, OPERATOR, 0).unwrap();
        assert_eq!(t.review, Some(false));
        let keep = Reassign { labels: Some(vec!["ui".into()]), ..Reassign::default() };
        let (t, _) = s.edit_task(t.id, None, None, None, None, &keep, OPERATOR, 0).unwrap();
        assert_eq!(t.review, Some(false), "an edit without --review leaves it alone");

        // The one-round-trip done (PostgreSQL only) leaves a task of its own --review to the
        // general path, which puts it in review; a task without one it finishes.
        let (r, _) = s
            .add_task_for("mine", "", 9, &[], &[], None, Some(true), OPERATOR, 0)
            .unwrap();
        let a = agent(s, "claude");
        s.claim(&a, Some(r.id), Lease::until(0, 1000)).unwrap();
        if s.done_at_once("id", "op-r", &a, r.id, None, 0).unwrap().is_some() {
            panic!("a --review task was finished without review");
        }
        assert_eq!(s.task(r.id, 0).unwrap().state, TaskState::Claimed);
        s.claim(&a, Some(plain.id), Lease::until(0, 1000)).unwrap();
        if let Some(at_once) = s.done_at_once("id", "op-p", &a, plain.id, None, 0).unwrap() {
            let v = at_once.answer.unwrap();
            assert_eq!(v["task"]["state"], "done", "{v}");
            assert!(v["task"]["review"].is_null(), "{v}");
        }
    }
}
