//! The integration tests: one binary, one module per behaviour. Every test starts the real
//! `board` binary (`CARGO_BIN_EXE_board`) against a real SQLite file in a temporary directory,
//! with real processes, signals, Unix sockets and tmux panes (on private tmux servers).
//!
//! Every module starts from the one harness, [`harness`]: the binary, the environment scrub
//! list, one `poll` with a deadline, and the boards and agents built on them.

// A failed expectation is the test failing; the test database is opened directly to inspect it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]

mod a_board_starts_before_its_store;
mod a_cut_host_holding_the_write_lock;
mod agent_cli_hooks;
mod agent_keys_in_the_tui;
mod agent_panes_in_tmux;
mod agent_worktrees;
mod agents_panel_in_the_tui;
mod answer_from_the_tui;
mod applied_writes_are_never_reported_lost;
mod backlog_import_export;
mod board_crash_and_restart;
mod board_outlives_agent;
mod claim_race;
mod clients_never_hang;
mod commit_fence_hooks;
mod completions_and_man;
mod config_reload;
mod demo_run;
mod done_fencing;
mod event_stream_order;
mod expel_on_exit;
mod expel_on_hard_signals;
mod friendly_edges;
mod harness;
mod honest_refusals;
mod hosts_ride_out_the_store;
mod hosts_share_one_store;
mod human_keeps_claim_while_typing;
mod identity;
mod identity_by_ancestry;
mod init_agents;
mod json_output;
mod json_stdio;
mod labels_and_assignment;
mod launcher_signals;
mod lease_lapse;
mod lease_with_silent_holders;
mod list_pages;
mod lost_answers_are_asked_again;
mod mcp_every_verb;
mod mcp_server;
mod messages_between_agents;
mod messages_reach_idle_agents;
mod names_stay_put;
mod non_utf8_arguments;
mod notifications_leave_the_terminal;
mod pipelined_requests;
mod profiles;
mod questions_wait_for_answers;
mod real_agents_in_panes;
mod real_cli_setup;
mod real_turn_aider;
mod real_turn_claude;
mod real_turn_codex;
mod real_turn_gemini;
mod reopening_a_task;
mod restart;
mod restored_database;
mod review_and_land;
mod review_in_the_tui;
mod review_per_task;
mod rework_at_land;
mod sandboxed_socket;
mod shared_store_claims;
mod shared_store_outages;
mod stop_an_agent;
mod stopping_a_host;
mod stopping_drains;
mod strict_wire;
mod suspend_is_not_silence;
mod three_hosts_under_chaos;
mod torture;
mod tui_in_tmux;
mod wire_malformed;
mod worktree_lifecycle;
