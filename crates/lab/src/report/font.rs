//! The TrueType font of figure text: `$RXLAB_FONT`, else the first of a few common system fonts. Plotters
//! draws PNG text with it and the PDF embeds it, so every format shows the same glyphs.

use anyhow::Result;
use plotters::style::FontStyle;
use std::path::PathBuf;

/// The font's bytes, read once.
pub fn bytes() -> Result<&'static [u8]> {
    static FONT: std::sync::OnceLock<std::result::Result<&'static [u8], String>> = std::sync::OnceLock::new();
    FONT.get_or_init(|| {
        let candidates: Vec<PathBuf> = std::env::var_os("RXLAB_FONT")
            .map(PathBuf::from)
            .into_iter()
            .chain(
                [
                    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                    "/usr/share/fonts/TTF/DejaVuSans.ttf",
                    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
                    "/System/Library/Fonts/Supplemental/Arial.ttf",
                ]
                .map(PathBuf::from),
            )
            .collect();
        let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
            "no TrueType font for figure text: install fonts-dejavu-core or set RXLAB_FONT=/path/to/font.ttf"
                .to_string()
        })?;
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read font {}: {e}", path.display()))?;
        Ok(Box::leak(bytes.into_boxed_slice()) as &'static [u8])
    })
    .clone()
    .map_err(anyhow::Error::msg)
}

/// Register the font as plotters' "sans-serif". Idempotent.
pub fn load() -> Result<()> {
    static LOADED: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    let bytes = bytes()?;
    LOADED
        .get_or_init(|| {
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| "the figure font is not a TrueType font; set RXLAB_FONT to one".to_string())
        })
        .clone()
        .map_err(anyhow::Error::msg)
}
