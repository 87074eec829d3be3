//! The signature checks of `jsonwebtoken`, on ring: a `CryptoProvider` that
//! verifies RS*, PS*, ES256, ES384 and EdDSA signatures with ring (the crypto
//! rustls already builds) instead of the crate's RustCrypto or aws-lc-rs
//! backends. It verifies only: HMAC keys are refused and nothing is signed.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{ErrorKind, Result, new_error};
use jsonwebtoken::jwk::{EllipticCurve, ThumbprintHash};
use jsonwebtoken::signature::{self, Verifier};
use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::signature as ring_sig;

/// The provider, installed once per process by [`install`].
static RING: CryptoProvider = CryptoProvider {
    signer_factory: no_signer,
    verifier_factory: verifier,
    key_utils: KeyUtils {
        rsa_pub_components_from_private_key: |_| Err(unsupported()),
        rsa_pub_components_from_public_key: |_| Err(unsupported()),
        ec_pub_components_from_private_key: no_ec_components,
        ed_pub_components_from_private_key: no_ed_components,
        compute_digest: digest,
    },
};

/// Makes ring the process's `jsonwebtoken` provider; a provider installed
/// before (by another part of the process) is kept.
pub fn install() {
    if CryptoProvider::install_default(&RING).is_err() {
        tracing::debug!("a jsonwebtoken crypto provider was already installed");
    }
}

fn unsupported() -> jsonwebtoken::errors::Error {
    new_error(ErrorKind::UnsupportedAlgorithm)
}

fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>> {
    Err(new_error(ErrorKind::Signing(
        "Hecate verifies access tokens; it signs none".into(),
    )))
}

fn no_ec_components(_: &[u8], _: Algorithm) -> Result<(EllipticCurve, Vec<u8>, Vec<u8>)> {
    Err(unsupported())
}

fn no_ed_components(_: &[u8], _: &EllipticCurve) -> Result<Vec<u8>> {
    Err(unsupported())
}

fn digest(data: &[u8], hash: ThumbprintHash) -> Result<Vec<u8>> {
    let algorithm = match hash {
        ThumbprintHash::SHA256 => &ring::digest::SHA256,
        ThumbprintHash::SHA384 => &ring::digest::SHA384,
        ThumbprintHash::SHA512 => &ring::digest::SHA512,
        _ => return Err(unsupported()),
    };
    Ok(ring::digest::digest(algorithm, data).as_ref().to_vec())
}

/// How one algorithm is checked with ring.
#[derive(Clone, Copy)]
enum Scheme {
    /// RSA (PKCS#1 v1.5 or PSS), keys of 2048 to 8192 bits.
    Rsa(&'static ring_sig::RsaParameters),
    /// ECDSA with fixed-size signatures, or Ed25519, on the raw public key.
    Raw(&'static dyn ring_sig::VerificationAlgorithm),
}

fn scheme(alg: Algorithm) -> Option<Scheme> {
    Some(match alg {
        Algorithm::RS256 => Scheme::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA256),
        Algorithm::RS384 => Scheme::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA384),
        Algorithm::RS512 => Scheme::Rsa(&ring_sig::RSA_PKCS1_2048_8192_SHA512),
        Algorithm::PS256 => Scheme::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA256),
        Algorithm::PS384 => Scheme::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA384),
        Algorithm::PS512 => Scheme::Rsa(&ring_sig::RSA_PSS_2048_8192_SHA512),
        Algorithm::ES256 => Scheme::Raw(&ring_sig::ECDSA_P256_SHA256_FIXED),
        Algorithm::ES384 => Scheme::Raw(&ring_sig::ECDSA_P384_SHA384_FIXED),
        Algorithm::EdDSA => Scheme::Raw(&ring_sig::ED25519),
        // HMAC (and any algorithm added later) is never checked here.
        _ => return None,
    })
}

fn verifier(alg: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>> {
    let scheme = scheme(*alg).ok_or_else(|| new_error(ErrorKind::InvalidAlgorithm))?;
    if key.family() != alg.family() {
        return Err(new_error(ErrorKind::InvalidKeyFormat));
    }
    Ok(Box::new(RingVerifier {
        alg: *alg,
        scheme,
        key: key.clone(),
    }))
}

/// One key, checked with one algorithm.
struct RingVerifier {
    alg: Algorithm,
    scheme: Scheme,
    key: DecodingKey,
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, msg: &[u8], sig: &Vec<u8>) -> std::result::Result<(), signature::Error> {
        let checked = match (self.scheme, self.key.kind()) {
            (Scheme::Rsa(params), DecodingKeyKind::RsaModulusExponent { n, e }) => {
                ring_sig::RsaPublicKeyComponents { n, e }.verify(params, msg, sig)
            }
            (Scheme::Rsa(params), DecodingKeyKind::SecretOrDer(der)) => {
                ring_sig::UnparsedPublicKey::new(params, der).verify(msg, sig)
            }
            (Scheme::Raw(algorithm), DecodingKeyKind::SecretOrDer(bytes)) => {
                ring_sig::UnparsedPublicKey::new(algorithm, bytes).verify(msg, sig)
            }
            (Scheme::Raw(_), DecodingKeyKind::RsaModulusExponent { .. }) => {
                Err(ring::error::Unspecified)
            }
        };
        checked.map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.alg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
    use ring::rand::SystemRandom;
    use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};

    fn check(alg: Algorithm, key: &DecodingKey, msg: &[u8], sig: &[u8]) -> bool {
        verifier(&alg, key)
            .map(|v| v.verify(msg, &sig.to_vec()).is_ok())
            .unwrap_or(false)
    }

    #[test]
    fn es256_and_eddsa_verify_and_a_changed_message_does_not() {
        let rng = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("ec key");
        let ec = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .expect("ec pair");
        let point = ec.public_key().as_ref();
        let key =
            DecodingKey::from_ec_components(&B64.encode(&point[1..33]), &B64.encode(&point[33..]))
                .expect("ec jwk");
        let sig = ec.sign(&rng, b"a.b").expect("sign");
        assert!(check(Algorithm::ES256, &key, b"a.b", sig.as_ref()));
        assert!(!check(Algorithm::ES256, &key, b"a.c", sig.as_ref()));
        assert!(!check(Algorithm::ES384, &key, b"a.b", sig.as_ref()));

        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("ed key");
        let ed = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("ed pair");
        let key =
            DecodingKey::from_ed_components(&B64.encode(ed.public_key().as_ref())).expect("ed jwk");
        let sig = ed.sign(b"a.b");
        assert!(check(Algorithm::EdDSA, &key, b"a.b", sig.as_ref()));
        assert!(!check(Algorithm::EdDSA, &key, b"a.b!", sig.as_ref()));
        assert!(
            !check(Algorithm::ES256, &key, b"a.b", sig.as_ref()),
            "an Ed25519 key is not an EC key"
        );
    }

    #[test]
    fn hmac_is_refused_and_nothing_is_signed() {
        let secret = DecodingKey::from_secret(b"published in a JWKS").expect("secret");
        assert!(verifier(&Algorithm::HS256, &secret).is_err());
        let key = EncodingKey::from_secret(b"x").expect("secret");
        assert!(no_signer(&Algorithm::HS256, &key).is_err());
        assert_eq!(
            digest(b"", ThumbprintHash::SHA256).expect("digest").len(),
            32
        );
    }
}
