//! The sqlite-vec extension, registered once for every SQLite connection Hecate
//! opens, so the memory tables' vector search works on each of them.

use std::sync::Once;

static REGISTER: Once = Once::new();

/// Registers sqlite-vec for every connection opened after this call.
pub(super) fn register_vec() {
    REGISTER.call_once(|| {
        type Init = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::os::raw::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::os::raw::c_int;
        // SAFETY: `sqlite3_vec_init` is the extension's entry point, whose real
        // signature is `Init` (the crate declares it without arguments); SQLite
        // calls it once per new connection with exactly these arguments.
        let rc = unsafe {
            let init: Init = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(init))
        };
        if rc != rusqlite::ffi::SQLITE_OK {
            tracing::error!(
                rc,
                "could not register sqlite-vec; recall searches will fail"
            );
        }
    });
}
