//! A downstream crate that adds tools by annotation only (test fixture).
