//! A run's CSV as a 3D view page, for any robot of the registry by name.

use super::robots::{with_robot, RobotVisitor};
use crate::support::view::{page_from_csv, write_page, ViewSetup};
use softgen_runtime::Model;
use std::path::Path;

/// Writes `page` (HTML) from the run's CSV `csv` of robot `robot` (see
/// [`page_from_csv`] for the columns it reads); returns the number of frames written. A
/// page that cannot be made leaves an earlier one as it was.
pub fn write_view_from_csv(csv: &Path, robot: &str, setup: &ViewSetup, page: &Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    write_view_from_csv_text(&text, csv, robot, setup, page)
}

/// As [`write_view_from_csv`], from the CSV's text (`origin` names it in messages).
pub fn write_view_from_csv_text(
    text: &str,
    origin: &Path,
    robot: &str,
    setup: &ViewSetup,
    page: &Path,
) -> Result<usize, String> {
    let (html, frames) = with_robot(robot, PageOf { text, csv: origin, setup })??;
    write_page(page, &html)?;
    Ok(frames)
}

struct PageOf<'a> {
    text: &'a str,
    csv: &'a Path,
    setup: &'a ViewSetup<'a>,
}

impl RobotVisitor for PageOf<'_> {
    type Output = Result<(String, usize), String>;

    fn visit<R: Model<N, C>, const N: usize, const C: usize>(self) -> Self::Output {
        page_from_csv::<R, N, C>(self.text, self.csv, self.setup)
    }
}
