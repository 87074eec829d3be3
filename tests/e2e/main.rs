//! Hermetic end-to-end tests: the real `hecate` binary over its pipes and
//! sockets against the `hecate-fixtures` peers (model server, ACP agent, MCP
//! server), and the outbound ACP adapter in-process against the fixture agent.
//! Nothing here needs `scripts/test-deps`. One module per concern; tests that
//! drive third-party software are in `tests/interop`.
//!
//! All tests run as threads of one process: a test must not change process-wide
//! state (environment, current directory) and must scope any process scan to
//! the pids it started.

#[path = "../support/mod.rs"]
mod support;

mod a2a_artifacts;
mod a2a_durable;
mod a2a_extended_card;
mod a2a_push_notifications;
mod a2a_remote_bad_cards;
mod a2a_server;
mod acp_adapter;
mod acp_additional_directories;
mod acp_bridge;
mod acp_elicitation;
mod acp_kits;
mod acp_network;
mod acp_options;
mod acp_prompt_content;
mod acp_session_titles;
mod acp_sessions_lifecycle;
mod acp_sign_in;
mod acp_terminal_sign_in;
mod acp_thought_level;
mod adapters_install;
mod agent_chain;
mod agent_chat;
mod agent_http;
mod agent_loop;
mod agent_mcp;
mod agent_system_layers;
mod agents_through_gateway;
mod cli_chat;
mod cli_tasks;
mod doctor;
mod engine_turns;
mod external_agent_chat;
mod fixture_acp_agent;
mod fixture_model_server;
mod gateway;
mod gateway_recording;
mod gateway_responses;
mod gateway_routing;
mod http_access_control;
mod http_agent_chat_sessions;
mod http_agent_processes;
mod http_agent_resources;
mod http_api_keys;
mod http_console;
mod http_documented_fields;
mod http_error_envelopes;
mod http_events_feed;
mod http_flow_chats;
mod http_flow_reroute;
mod http_history_settings;
mod http_idp;
mod http_mcp_servers;
mod http_memory;
mod http_message_roles;
mod http_providers;
mod http_session_stream;
mod http_sessions_shared_with_cli;
mod http_stream_approval_events;
mod http_stream_fanout;
mod http_trace_costs;
mod http_transcript_pages;
mod http_turn_traces;
mod kill9_soak;
mod mcp_delegation;
mod mcp_http;
mod mcp_kits;
mod mcp_oauth_required;
mod mcp_oauth_store;
mod mcp_pool;
mod mcp_resources;
mod mcp_revision_2026;
mod mcp_stdio_clumsy_client;
mod mcp_stdio_server;
mod mcp_tasks;
mod mcp_tool_search;
mod mcp_upstream;
mod memory_recall;
mod model_capabilities;
mod no_child_outlives_hecate;
mod provider_faults;
mod serve_http;
mod serve_slow_clients;
mod stdio_fuzz;
mod store_conformance;
mod store_copy;
mod store_durability;
mod store_postgres;
mod store_postgres_outage;
mod store_postgres_pool;
mod store_postgres_tls;
mod task_confinement;
mod task_runtime;
mod telemetry_otlp;
mod terminal_sandbox;
