//! `authenticate` and `logout` on Hecate. Hecate's own method `hecate-setup`
//! only checks that something is configured; an agent's method, offered in the
//! `auth_required` error of the request that needed it as
//! `agent:ADAPTER_ID:METHOD_ID`, is passed to that agent's running process.
//! `logout` reaches every running agent that offers it.

use super::convert::{nothing_configured, to_rpc};
use super::state::Shared;
use agent_client_protocol::Error;
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, AuthenticateResponse, LogoutRequest, LogoutResponse,
};

/// Hecate's own sign-in method: there is nothing to sign in to, only setup.
pub const SETUP_METHOD: &str = "hecate-setup";

/// `authenticate`: `hecate-setup`, or an agent's namespaced method.
pub async fn authenticate(
    shared: &Shared,
    r: AuthenticateRequest,
    resp: Responder<AuthenticateResponse>,
) -> Result<(), Error> {
    let id = r.method_id.0.to_string();
    if id == SETUP_METHOD {
        return if shared.targets().await.is_empty() {
            resp.respond_with_error(nothing_configured())
        } else {
            resp.respond(AuthenticateResponse::new())
        };
    }
    match shared.engine.agents().authenticate(&id).await {
        Ok(()) => resp.respond(AuthenticateResponse::new()),
        Err(e) => resp.respond_with_error(to_rpc(&e)),
    }
}

/// `logout`: signs out of every running agent that offers it.
pub async fn logout(
    shared: &Shared,
    _r: LogoutRequest,
    resp: Responder<LogoutResponse>,
) -> Result<(), Error> {
    match shared.engine.agents().logout().await {
        Ok(adapters) => {
            tracing::info!(?adapters, "signed out");
            resp.respond(LogoutResponse::new())
        }
        Err(e) => resp.respond_with_error(to_rpc(&e)),
    }
}
