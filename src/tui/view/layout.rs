//! Where things go on the main screen: its areas and the backlog's width. (The details
//! dialog's box is [`crate::tui::update::detail::detail_box`]: the scroll keys need it too.)

use ratatui::layout::Rect;

/// Widths from which the agents and the feed sit to the right of the backlog.
pub const WIDE: u16 = 120;

/// Columns of the backlog on a screen `width` columns wide (all of it below [`WIDE`]; from
/// there on the agents and the feed get the rest, at least 54 columns).
pub fn backlog_width(width: u16) -> u16 {
    if width < WIDE {
        width
    } else {
        width - (width * 2 / 5).max(54)
    }
}

/// Where each part of the main screen goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Areas {
    pub(crate) header: Rect,
    pub(crate) banners: Rect,
    pub(crate) backlog: Rect,
    pub(crate) agents: Rect,
    pub(crate) events: Rect,
    pub(crate) footer: Rect,
}

pub(crate) fn layout(area: Rect, banners: u16, agents: usize) -> Areas {
    let row = |y: u16, h: u16| Rect::new(area.x, y, area.width, h);
    let header = row(area.y, area.height.min(1));
    let footer = row(area.bottom().saturating_sub(1), area.height.min(1));
    let body_top = header.bottom();
    let body_h = footer.y.saturating_sub(body_top);
    let banners = banners.min(body_h / 3);
    let banners_r = row(body_top, banners);
    let main = row(banners_r.bottom(), body_h - banners);
    let agents_want = u16::try_from(agents.max(1))
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    if area.width >= WIDE {
        let left_w = backlog_width(area.width);
        let backlog = Rect::new(main.x, main.y, left_w, main.height);
        let right = Rect::new(main.x + left_w, main.y, main.width - left_w, main.height);
        let agents_h = agents_want.min(right.height / 2).max(right.height.min(3));
        Areas {
            header,
            banners: banners_r,
            backlog,
            agents: Rect::new(right.x, right.y, right.width, agents_h),
            events: Rect::new(
                right.x,
                right.y + agents_h,
                right.width,
                right.height - agents_h,
            ),
            footer,
        }
    } else {
        let avail = main.height;
        let agents_h = agents_want.min((avail * 3 / 10).max(4)).min(avail / 3);
        let events_h = (avail * 2 / 7).clamp(3, 14).min(avail / 3);
        let backlog_h = avail - agents_h - events_h;
        Areas {
            header,
            banners: banners_r,
            backlog: row(main.y, backlog_h),
            agents: row(main.y + backlog_h, agents_h),
            events: row(main.y + backlog_h + agents_h, events_h),
            footer,
        }
    }
}
