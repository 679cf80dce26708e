//! PDF output for LaTeX: the figure's SVG converted in-process by `svg2pdf` (vector, text embedded in the
//! figure font), with no external program.

use super::font;
use anyhow::{Result, anyhow};
use svg2pdf::usvg;

/// The PDF of `svg`; `what` names the figure in errors.
pub fn from_svg(svg: &str, what: &str) -> Result<Vec<u8>> {
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_font_data(font::bytes()?.to_vec());
    let family = db.faces().next().and_then(|f| f.families.first()).map(|(name, _)| name.clone());
    if let Some(family) = family {
        db.set_sans_serif_family(family.clone());
        opt.font_family = family;
    }
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| anyhow!("figure '{what}': its SVG does not parse: {e}"))?;
    svg2pdf::to_pdf(&tree, svg2pdf::ConversionOptions::default(), svg2pdf::PageOptions::default())
        .map_err(|e| anyhow!("figure '{what}': cannot convert to PDF: {e}"))
}
