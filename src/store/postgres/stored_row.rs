//! PostgreSQL's row behind the backends' one decoding interface.

use super::op_error::OpError;
use crate::domain::error::HecateError;
use crate::store::rows::{Column, Corrupt, StoredRow};

impl StoredRow for tokio_postgres::Row {
    type Error = OpError;

    fn col<T: Column>(&self, i: usize) -> Result<T, OpError> {
        Ok(self.try_get(i)?)
    }

    fn corrupt(&self, _i: usize, why: Corrupt) -> OpError {
        match why {
            Corrupt::Json(e) => OpError::Json(e),
            Corrupt::Refused(e) => OpError::Domain(e),
            unknown @ Corrupt::Unknown { .. } => {
                OpError::Domain(HecateError::store(unknown.to_string()))
            }
        }
    }
}
