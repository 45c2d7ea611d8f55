//! The update functions driven by keys and snapshots, checked on the sample board.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use crate::proto::error::BoardError;

use super::state::app::{show_call, Conn, Mode};
use super::state::app::{App, Effect, Purpose, Request};
use super::state::snapshot::{Group, Row};
use super::update::fixture;
use crate::proto::glossary::TaskId;
use crate::proto::methods::{Call, InboxParams, ReleaseParams};
use crate::proto::Method;

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn typed(app: &mut App, s: &str) {
    for c in s.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
}

#[test]
fn backlog_is_grouped_in_order_with_headers() {
    let app = fixture::sample_app(true);
    let headers: Vec<_> = app
        .rows
        .iter()
        .filter_map(|r| match r {
            Row::Header(g, n) => Some((g.label(), *n)),
            _ => None,
        })
        .collect();
    assert_eq!(
        headers,
        vec![("READY", 7), ("BLOCKED", 4), ("CLAIMED", 4), ("DONE", 4)]
    );
    assert_eq!(app.totals.iter().sum::<usize>(), 20);
    // The first task is selected, never a heading.
    assert!(matches!(app.rows[app.selected.unwrap()], Row::Task(_)));
}

#[test]
fn movement_skips_headings_and_stops_at_the_ends() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('G')));
    let last = app.selected.unwrap();
    assert_eq!(last, app.rows.len() - 1);
    app.on_key(key(KeyCode::Char('j')));
    assert_eq!(app.selected, Some(last));
    app.on_key(key(KeyCode::Char('g')));
    assert_eq!(app.selected, Some(1));
    app.on_key(key(KeyCode::Char('k')));
    assert_eq!(app.selected, Some(1));
    for _ in 0..7 {
        app.on_key(key(KeyCode::Down));
    }
    // Seven ready tasks, then the BLOCKED heading is skipped.
    assert!(matches!(app.rows[app.selected.unwrap()], Row::Task(_)));
    assert_eq!(app.selected_task().unwrap().group, Group::Blocked);
}

#[test]
fn selection_follows_the_task_across_snapshots() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('j')));
    let id = app.selected_task().unwrap().task.id;
    let mut snap = fixture::sample_snapshot();
    snap.tasks.reverse();
    app.on_snapshot(snap, 0);
    assert_eq!(app.selected_task().unwrap().task.id, id);
}

#[test]
fn filter_narrows_the_backlog_and_escape_clears_it() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('/')));
    typed(&mut app, "refund");
    let shown = app
        .rows
        .iter()
        .filter(|r| matches!(r, Row::Task(_)))
        .count();
    assert!(shown > 0 && shown < 20, "{shown}");
    for r in &app.rows {
        if let Row::Task(i) = r {
            assert!(app.tasks[*i].title.to_lowercase().contains("refund"));
        }
    }
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.mode, Mode::Normal);
    assert_eq!(app.filter.text(), "refund");
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.filter.text(), "");
    assert_eq!(app.rows.len(), 23);
}

#[test]
fn force_release_asks_first() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('/')));
    typed(&mut app, "claimed");
    app.on_key(key(KeyCode::Enter));
    let t = app.selected_task().unwrap().task.clone();
    assert_eq!(t.state, crate::proto::glossary::TaskState::Claimed);
    assert!(app.on_key(key(KeyCode::Char('r'))).is_empty());
    assert!(matches!(app.mode, Mode::Confirm(_)));
    assert!(app.on_key(key(KeyCode::Char('n'))).is_empty());
    assert_eq!(app.mode, Mode::Normal);
    app.on_key(key(KeyCode::Char('r')));
    let fx = app.on_key(key(KeyCode::Char('y')));
    assert_eq!(
        fx,
        vec![Effect::Call(Request {
            purpose: Purpose::Release(t.id),
            call: Call::Release(ReleaseParams {
                task: t.id,
                force: Some(true),
                ..ReleaseParams::default()
            }),
        })]
    );
}

#[test]
fn cancel_asks_first_and_refuses_finished_tasks() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('x')));
    let fx = app.on_key(key(KeyCode::Char('y')));
    assert!(matches!(&fx[..], [Effect::Call(c)] if c.call.method() == Method::Cancel));
    app.on_key(key(KeyCode::Char('G')));
    assert_eq!(
        app.selected_task().unwrap().task.state,
        crate::proto::glossary::TaskState::Done
    );
    assert!(app.on_key(key(KeyCode::Char('x'))).is_empty());
    assert_eq!(app.mode, Mode::Normal);
    assert!(app.current_flash().unwrap().error);
}

#[test]
fn details_are_fetched_and_refreshed() {
    let mut app = fixture::sample_app(true);
    let fx = app.on_key(key(KeyCode::Enter));
    let id = app.selected_task().unwrap().task.id;
    assert_eq!(fx, vec![show_call(id)]);
    let fx = app.on_snapshot(fixture::sample_snapshot(), 0);
    assert_eq!(fx, vec![show_call(id)]);
    app.on_key(key(KeyCode::Esc));
    assert_eq!(app.mode, Mode::Normal);
}

#[test]
fn detail_scrolling_stops_at_the_end() {
    let mut app = fixture::sample_app(true);
    app.set_size(80, 24);
    app.on_key(key(KeyCode::Enter));
    let mut task = app.selected_task().unwrap().task.clone();
    task.body = (0..100)
        .map(|i| format!("line {i}"))
        .collect::<Vec<_>>()
        .join("\n");
    let v = json!({"task": task, "notes": [], "events": []});
    app.on_call_result(Purpose::Show(task.id), Ok(v));
    let scroll = |app: &App| match &app.mode {
        Mode::Detail(d) => d.scroll,
        other => panic!("{other:?}"),
    };
    app.on_key(key(KeyCode::Char('G')));
    let max = scroll(&app);
    assert!(max > 80, "{max}");
    app.on_key(key(KeyCode::Char('k')));
    assert_eq!(scroll(&app), max - 1);
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('j')));
    assert_eq!(scroll(&app), max);
}

#[test]
fn goal_form_is_prefilled_and_q_in_help_does_not_quit() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Char('?')));
    assert_eq!(app.mode, Mode::Help);
    assert!(app.on_key(key(KeyCode::Char('q'))).is_empty());
    app.on_key(key(KeyCode::Char('s')));
    let Mode::Form(f) = &app.mode else { panic!() };
    assert_eq!(f.fields[0].input.text(), app.goal.as_ref().unwrap().text);
    // Typing q in a form types it.
    assert!(app.on_key(key(KeyCode::Char('q'))).is_empty());
    assert_eq!(app.on_key(key(KeyCode::Esc)), vec![]);
    assert_eq!(app.on_key(key(KeyCode::Char('q'))), vec![Effect::Quit]);
}

#[test]
fn countdown_ticks_from_the_fetch_time() {
    let mut app = fixture::sample_app(true);
    let t = app
        .tasks
        .iter()
        .find(|t| t.task.expires_in_ms.is_some())
        .unwrap()
        .task
        .clone();
    let at_fetch = app.remaining_ms(&t).unwrap();
    app.set_clock(app.fetched_ms + 3_000, app.now_wall_ms + 3_000);
    assert_eq!(app.remaining_ms(&t).unwrap(), at_fetch - 3_000);
}

#[test]
fn reconnecting_and_back() {
    let mut app = fixture::sample_app(true);
    app.on_disconnected(2, "no board\x1b[2J");
    assert!(
        matches!(&app.conn, Conn::Reconnecting { attempt: 2, error } if !error.contains('\x1b'))
    );
    assert_eq!(app.on_connected(), vec![Effect::Refresh]);
    assert_eq!(app.conn, Conn::Live);
    assert!(app.current_flash().unwrap().text.contains("reconnected"));
}

#[test]
fn the_agents_panel_shows_names_live_agents_and_one_ended_row_per_name() {
    let mut snap = fixture::sample_snapshot();
    // `sh` restarted twice (ids sh, sh-2 ended; sh-3 live), and the second slot `sh-2` ended
    // twice (ids sh-2-2, sh-2-3): the panel shows `sh` once, live, and `sh-2` once, its last.
    let template = snap.agents[0].clone();
    let mut add = |id: &str, name: &str, start: &str, ended: Option<&str>| {
        let mut v = template.clone();
        v.id = id.into();
        v.name = name.into();
        v.started_at = format!("2026-03-01T{start}.000Z");
        v.ended_at = ended.map(|t| format!("2026-03-01T{t}.000Z"));
        v.claims = Vec::new();
        snap.agents.push(v);
    };
    add("sh", "sh", "11:50:00", Some("11:51:00"));
    add("sh-2", "sh", "11:51:00", Some("11:52:00"));
    add("sh-3", "sh", "11:52:00", None);
    add("sh-2-2", "sh-2", "11:50:30", Some("11:53:00"));
    add("sh-2-3", "sh-2", "11:53:30", Some("11:54:00"));
    snap.events[0].agent = Some("sh-2".into());
    let held = snap.tasks.iter().position(|t| t.holder.is_some()).unwrap();
    snap.tasks[held].holder = Some("sh-3".into());
    let held_id = snap.tasks[held].id;
    let app = fixture::app_with(snap, false);
    let item = app.tasks.iter().find(|t| t.task.id == held_id).unwrap();
    assert_eq!(item.holder, "sh", "a holder is named as people know it");
    let rows = |name: &str| -> Vec<&str> {
        app.agents
            .iter()
            .filter(|a| a.name == name)
            .map(|a| a.view.id.as_str())
            .collect()
    };
    assert_eq!(rows("sh"), ["sh-3"], "only the live sh");
    assert_eq!(rows("sh-2"), ["sh-2-3"], "only the last ended sh-2");
    // The feed names the session of an event as people know it: `sh-2` was a session of sh.
    let feed = app
        .events
        .iter()
        .find(|e| e.view.agent.as_deref() == Some("sh-2"));
    assert_eq!(feed.map(|e| e.agent.as_str()), Some("sh"));
}

fn has_task_write(fx: &[Effect]) -> bool {
    fx.iter().any(|e| {
        matches!(e, Effect::Call(c) if [Method::Edit, Method::Cancel, Method::Release, Method::Add, Method::Goal].contains(&c.call.method()))
    })
}

#[test]
fn with_the_agents_panel_focused_backlog_keys_change_no_task() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.focus, super::state::app::Focus::Agents);
    // The ended agent: `m` is refused, and what is typed next must not reach the backlog.
    app.agent_selected = app
        .agents
        .iter()
        .position(|a| a.view.ended_at.is_some())
        .unwrap();
    app.on_key(key(KeyCode::Char('m')));
    assert!(app.current_flash().unwrap().error);
    let mut effects = Vec::new();
    for c in "exrash renamed".chars() {
        effects.extend(app.on_key(key(KeyCode::Char(c))));
    }
    effects.extend(app.on_key(key(KeyCode::Enter)));
    effects.extend(app.on_key(key(KeyCode::Char('y'))));
    assert!(!has_task_write(&effects), "{effects:?}");
    assert!(
        !matches!(app.mode, Mode::Form(_) | Mode::Confirm(_)),
        "{:?}",
        app.mode
    );
    assert!(!app.show_cancelled);
}

#[test]
fn tab_lands_on_the_first_live_agent() {
    let mut app = fixture::sample_app(true);
    let gone = app
        .agents
        .iter()
        .position(|a| a.view.ended_at.is_some())
        .unwrap();
    app.agent_selected = gone;
    app.on_key(key(KeyCode::Tab));
    let selected = &app.agents[app.agent_selected];
    assert!(selected.view.ended_at.is_none());
    assert_eq!(app.agent_selected, 0);
}

#[test]
fn agent_selection_follows_the_agent_not_the_row() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Char('j')));
    let id = app.agents[app.agent_selected].view.id.clone();
    assert_eq!(id, "codex-1");
    // A new agent starts and the order changes: the selection stays on codex-1.
    let mut snap = fixture::sample_snapshot();
    let mut newcomer = snap.agents[0].clone();
    newcomer.id = "aider-1".into();
    newcomer.name = "aider".into();
    snap.agents.insert(0, newcomer);
    snap.agents.swap(1, 2);
    app.on_snapshot(snap, 0);
    assert_eq!(app.agents[app.agent_selected].view.id, id);
    // Once it is no longer shown, the selection goes to the first live agent.
    let mut snap = fixture::sample_snapshot();
    snap.agents.retain(|a| a.id != id);
    app.on_snapshot(snap, 0);
    assert_eq!(app.agents[app.agent_selected].view.id, "claude-1");
}

#[test]
fn stop_restart_refresh_and_cancel_each_have_their_own_key() {
    let mut app = fixture::sample_app(true);
    // Backlog: R is no longer refresh (R restarts an agent); F5 and Ctrl-L refresh.
    assert!(app.on_key(key(KeyCode::Char('R'))).is_empty());
    assert_eq!(app.on_key(key(KeyCode::F(5))), vec![Effect::Refresh]);
    assert_eq!(
        app.on_key(KeyEvent::new(KeyCode::Char('l'), KeyModifiers::CONTROL)),
        vec![Effect::Refresh]
    );
    // Agents: X does nothing, K asks to stop, x cancels nothing.
    app.on_key(key(KeyCode::Tab));
    assert!(app.on_key(key(KeyCode::Char('X'))).is_empty());
    assert!(app.team_pending.is_none());
    assert!(app.on_key(key(KeyCode::Char('x'))).is_empty());
    assert_eq!(app.mode, Mode::Normal);
    app.on_key(key(KeyCode::Char('K')));
    let q = app.team_pending.clone().unwrap();
    assert!(q.question.starts_with("Stop agent claude-1?"), "{q:?}");
}

#[test]
fn a_stop_goes_through_the_board_and_says_stopped_once_the_session_ended() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Char('K')));
    let fx = app.on_key(key(KeyCode::Char('y')));
    let [Effect::Call(call)] = fx.as_slice() else {
        panic!("{fx:?}")
    };
    assert_eq!(
        call.call.wire(),
        (Method::SessionStop, json!({"session": "claude-1"}))
    );
    let fx = app.on_call_result(
        Purpose::StopAgent,
        Ok(json!({"session": "claude-1", "pid": 41822, "kill_after_ms": 3000})),
    );
    assert_eq!(fx, vec![Effect::Refresh]);
    assert!(app
        .current_flash()
        .unwrap()
        .text
        .starts_with("stopping claude-1"));
    // Still running at the next refresh: nothing said yet.
    app.on_snapshot(fixture::sample_snapshot(), app.now_ms);
    assert!(app.stopping.is_some());
    let mut snap = fixture::sample_snapshot();
    snap.agents[0].ended_at = Some("2026-03-01T12:00:01.000Z".into());
    app.on_snapshot(snap, app.now_ms);
    assert!(app.stopping.is_none());
    let flash = app.current_flash().unwrap();
    assert!(
        flash.text.starts_with("stopped claude-1") && !flash.error,
        "{flash:?}"
    );
}

#[test]
fn a_stop_that_does_not_end_the_session_says_so() {
    let mut app = fixture::sample_app(true);
    app.on_key(key(KeyCode::Tab));
    app.on_key(key(KeyCode::Char('K')));
    app.on_key(key(KeyCode::Char('y')));
    app.on_call_result(
        Purpose::StopAgent,
        Ok(json!({"session": "claude-1", "pid": 41822, "kill_after_ms": 3000})),
    );
    app.set_clock(app.now_ms + 10_000, app.now_wall_ms + 10_000);
    app.on_snapshot(fixture::sample_snapshot(), app.now_ms);
    let flash = app.current_flash().unwrap();
    assert!(
        flash.text.starts_with("could not stop claude-1") && flash.error,
        "{flash:?}"
    );
    // A refused stop says why at once.
    app.on_key(key(KeyCode::Char('K')));
    app.on_key(key(KeyCode::Char('y')));
    app.on_call_result(
        Purpose::StopAgent,
        Err(BoardError::not_found(
            "the agent's process (pid 41822) has ended already",
        )),
    );
    assert!(app.stopping.is_none());
    assert!(app
        .current_flash()
        .unwrap()
        .text
        .contains("has ended already"));
}

#[test]
fn needs_you_lists_questions_prompts_messages_and_abandoned_claims() {
    use super::state::needs::NeedKind;
    use super::update::needs::needs;
    let mut snap = fixture::sample_snapshot();
    // A board that tells questions from permission prompts: codex-1 is at a prompt.
    snap.agents[1].waiting = Some("Codex asks permission to run `rm -rf target`".into());
    snap.unread = super::state::snapshot::Unread {
        count: 2,
        from: vec!["claude-1".into()],
    };
    let mut app = fixture::app_with(snap, true);
    let kinds: Vec<NeedKind> = needs(&app).iter().map(|n| n.kind).collect();
    assert_eq!(
        kinds,
        vec![
            NeedKind::Question,
            NeedKind::Permission,
            NeedKind::Messages,
            NeedKind::Orphaned
        ]
    );
    let items = needs(&app);
    assert!(items[0].text.starts_with("gemini-1 asks: Should refunds"));
    assert!(items[3].text.contains("#9"), "{:?}", items[3]);

    // i opens the list; A on the question opens the answer form for gemini-1.
    app.on_key(key(KeyCode::Char('i')));
    assert_eq!(app.mode, Mode::NeedsYou(0));
    app.on_key(key(KeyCode::Char('A')));
    let Mode::Form(f) = &app.mode else {
        panic!("{:?}", app.mode)
    };
    assert!(f.title().starts_with("Answer gemini-1"), "{}", f.title());
    app.on_key(key(KeyCode::Esc));

    // ⏎ on the messages reads them (inbox), then shows them; the count goes.
    app.on_key(key(KeyCode::Char('i')));
    app.on_key(key(KeyCode::Char('j')));
    app.on_key(key(KeyCode::Char('j')));
    let fx = app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(&fx[..], [Effect::Call(c)] if c.call == Call::Inbox(InboxParams::default()) && c.purpose == Purpose::Inbox),
        "{fx:?}"
    );
    app.on_call_result(
        Purpose::Inbox,
        Ok(json!({"messages": [{"id": 1, "from": "claude-1", "to": "operator",
            "text": "done with \u{1b}[2Jthe parser", "sent_at": "2026-03-01T11:59:00.000Z", "answer": false}]})),
    );
    let Mode::Inbox(inbox) = &app.mode else {
        panic!("{:?}", app.mode)
    };
    assert_eq!(inbox.messages.len(), 1);
    assert!(!inbox.messages[0].2.contains('\x1b'));
    assert_eq!(app.unread.count, 0);
    app.on_key(key(KeyCode::Esc));

    // d dismisses the abandoned claim; ⏎ on a permission prompt goes to the pane.
    app.on_key(key(KeyCode::Char('i')));
    app.on_key(key(KeyCode::Char('G')));
    for _ in 0..3 {
        app.on_key(key(KeyCode::Char('j')));
    }
    app.on_key(key(KeyCode::Char('d')));
    assert!(needs(&app).iter().all(|n| n.kind != NeedKind::Orphaned));
    app.mode = Mode::NeedsYou(1);
    let fx = app.on_key(key(KeyCode::Enter));
    assert!(
        matches!(&fx[..], [Effect::Team(op)] if op.action == super::state::agents::TeamAction::Attach && op.slot == "codex-1"),
        "{fx:?}"
    );
}

/// Ids of the tasks the backlog shows, in order.
fn shown_ids(app: &App) -> Vec<TaskId> {
    app.rows
        .iter()
        .filter_map(|r| match r {
            Row::Task(i) => Some(app.tasks[*i].task.id),
            _ => None,
        })
        .collect()
}

#[test]
fn l_steps_the_filter_through_the_boards_labels_then_clears_it() {
    let mut snap = fixture::sample_snapshot();
    snap.tasks[0].labels = vec!["ui".into(), "api".into()];
    snap.tasks[3].labels = vec!["ui".into()];
    let (first, fourth) = (snap.tasks[0].id, snap.tasks[3].id);
    let mut app = fixture::sample_app(true);
    app.on_snapshot(snap, 0);

    app.on_key(key(KeyCode::Char('L')));
    assert_eq!(app.filter.text(), "label:api");
    assert_eq!(shown_ids(&app), vec![first]);
    app.on_key(key(KeyCode::Char('L')));
    assert_eq!(app.filter.text(), "label:ui");
    let mut ui = shown_ids(&app);
    ui.sort();
    let mut want = vec![first, fourth];
    want.sort();
    assert_eq!(ui, want);
    app.on_key(key(KeyCode::Char('L')));
    assert_eq!(
        app.filter.text(),
        "",
        "after the last label the filter is cleared"
    );
    assert_eq!(app.rows.len(), 23);
}
