//! The `mock` embedder of influence.md §1 (parity with agentfootprint and tests), and the choice
//! among the built-in embedders by name. It knows letters, not meaning.

use super::hashed::HashedEmbedder;
use super::lexical::LexicalEmbedder;
use super::types::{EmbedError, Embedder};

/// The mock embedder's vector length.
pub const MOCK_DIM: usize = 32;

/// `mock`: 32 zeros, plus 1 at `c % 32` for every UTF-16 code unit `c` of the text.
#[derive(Clone, Copy, Debug, Default)]
pub struct MockEmbedder;

/// The mock vector of one text.
pub fn mock_vector(text: &str) -> Vec<f64> {
    let mut v = vec![0.0; MOCK_DIM];
    for unit in text.encode_utf16() {
        if let Some(x) = v.get_mut(usize::from(unit) % MOCK_DIM) {
            *x += 1.0;
        }
    }
    v
}

impl Embedder for MockEmbedder {
    fn name(&self) -> &str {
        "mock"
    }

    fn per_text(&self) -> bool {
        true
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, EmbedError> {
        Ok(texts.iter().map(|t| mock_vector(t)).collect())
    }
}

/// The names of the built-in embedders, default first.
pub const BUILTIN_EMBEDDERS: [&str; 3] = ["hashed", "mock", "lexical"];

/// The built-in embedder of this name (`hashed`, `mock`, `lexical`), or `None`.
pub fn builtin_embedder(name: &str) -> Option<Box<dyn Embedder>> {
    match name {
        "hashed" => Some(Box::new(HashedEmbedder)),
        "mock" => Some(Box::new(MockEmbedder)),
        "lexical" => Some(Box::new(LexicalEmbedder)),
        _ => None,
    }
}
