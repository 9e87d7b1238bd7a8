// SPDX-License-Identifier: GPL-2.0-only
/* `latprof top`'s full screen on ncurses (top_screen.h). */
#include "src/top_screen.h"

#include <errno.h>
#include <ncurses.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/top_text.h"

#define LINE_MAX_BYTES 512
#define KEY_ESCAPE 27
#define KEY_CTRL(c) ((c) & 0x1f)

/* The name of each view's sort columns, by enum top_sort. */
static const char *const sort_names[TOP_VIEWS][TOP_SORTS] = {
	[TOP_VIEW_FUNCS] = { "OWN", "TOTAL", "TOTAL ALL", "FUNCTION" },
	[TOP_VIEW_WAITS] = { "TIME/S", "CALLS/S", "TOTAL", "SITE" },
	[TOP_VIEW_SYSCALLS] = { "TIME/S", "CALLS/S", "CALLS", "SYSCALL" },
};

static const char *const view_names[TOP_VIEWS] = { "functions", "waits", "syscalls" };

static const char *const help_lines[] = {
	"latprof top: keys",
	"",
	"  1 f      functions: own and total CPU, last interval and since start",
	"  2 w      waits: call sites of slow syscalls (path of work, readiness, idle)",
	"  3 s      syscalls: calls, errors, time and percentiles per second",
	"  Tab      the next view",
	"  < >      sort by the column left or right of the current one",
	"  space    freeze the screen (collection goes on); again to thaw",
	"  p        show one process only, the next in pid order; P all again",
	"  Up Down  select a function (also k j, PgUp PgDn, Home End)",
	"  Enter    zoom: the selected function's callers and callees",
	"  Esc Bksp leave the zoom",
	"  ? h      this help (any key closes it)",
	"  q Ctrl-C quit; -o FILE is written then",
	"",
	"Shares are of the targets' CPU in the last interval; rates are per second.",
};

/*
 * One line of the view: what it shows, formatted only when drawn (a view
 * may have thousands of rows and a screen fifty), and the function Enter
 * zooms into (NULL: none).
 */
enum line_kind { LINE_FUNC, LINE_SITE, LINE_SYS, LINE_GROUP, LINE_TITLE };

struct screen_line {
	enum line_kind kind;
	const void *row;	/* top_func, top_site, top_sys; the title's text */
	enum hot_wait group;
	const char *func;
	bool heading;
};

struct screen_lines {
	struct screen_line *items;
	size_t nr, alloc;
};

static struct screen_line *line_add(struct screen_lines *l, enum line_kind kind, const void *row,
				    const char *func)
{
	struct screen_line *sl;

	if (l->nr == l->alloc) {
		size_t n = l->alloc ? 2 * l->alloc : 64;
		void *items = realloc(l->items, n * sizeof(*l->items));

		if (!items)
			return NULL;
		l->items = items;
		l->alloc = n;
	}
	sl = &l->items[l->nr++];
	*sl = (struct screen_line){
		.kind = kind, .row = row, .func = func,
		.heading = kind == LINE_GROUP || kind == LINE_TITLE,
	};
	return sl;
}

/* The text of line @sl. */
static void line_text(const struct top_model *m, const struct screen_line *sl, char *buf,
		      size_t size)
{
	switch (sl->kind) {
	case LINE_FUNC:
		top_text_func(m, sl->row, buf, size);
		break;
	case LINE_SITE:
		top_text_site(m, sl->row, buf, size);
		break;
	case LINE_SYS:
		top_text_sys(m, sl->row, buf, size);
		break;
	case LINE_GROUP:
		top_text_group(m, sl->group, buf, size);
		break;
	case LINE_TITLE:
		snprintf(buf, size, "%s:", (const char *)sl->row);
		break;
	}
}

/* The functions (or the zoom's callers and callees) as lines. */
static void lines_funcs(struct screen_lines *l, struct top_model *m)
{
	struct { const char *title; const struct top_func *rows; size_t nr; } parts[2] = {
		{ "Callers", m->callers.items, m->callers.nr },
		{ "Callees", m->callees.items, m->callees.nr },
	};
	size_t i, p;

	if (!m->zoom) {
		for (i = 0; i < m->funcs.nr; i++)
			line_add(l, LINE_FUNC, &m->funcs.items[i], m->funcs.items[i].name);
		return;
	}
	for (p = 0; p < 2; p++) {
		line_add(l, LINE_TITLE, parts[p].title, NULL);
		for (i = 0; i < parts[p].nr; i++)
			line_add(l, LINE_FUNC, &parts[p].rows[i], parts[p].rows[i].name);
	}
}

static void lines_waits(struct screen_lines *l, struct top_model *m)
{
	struct screen_line *sl;
	enum hot_wait w;
	size_t i;
	bool any;

	for (w = 0; w < HOT_WAITS; w++) {
		for (i = 0, any = false; i < m->sites.nr; i++) {
			if (m->sites.items[i].wait != w)
				continue;
			if (!any && (sl = line_add(l, LINE_GROUP, NULL, NULL)))
				sl->group = w;
			any = true;
			line_add(l, LINE_SITE, &m->sites.items[i], NULL);
		}
	}
}

static void lines_sys(struct screen_lines *l, struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->sys.nr; i++)
		line_add(l, LINE_SYS, &m->sys.items[i], NULL);
}

static void lines_of(struct screen_lines *l, struct top_screen *ts, struct top_model *m)
{
	l->nr = 0;
	top_model_sort(m, ts->view, ts->sort[ts->view]);
	if (ts->view == TOP_VIEW_FUNCS)
		lines_funcs(l, m);
	else if (ts->view == TOP_VIEW_WAITS)
		lines_waits(l, m);
	else
		lines_sys(l, m);
}

/* The lines of the view as drawn last: what the keys act on. */
static struct screen_lines shown;
static SCREEN *screen;

int top_screen_open(struct top_screen *ts)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return -ENOTTY;
	screen = newterm(NULL, stdout, stdin);
	if (!screen)
		return -ENOTTY;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	ts->open = true;
	return 0;
}

void top_screen_close(struct top_screen *ts)
{
	if (!ts->open)
		return;
	ts->open = false;
	curs_set(1);
	endwin();
	delscreen(screen);
	screen = NULL;
	free(shown.items);
	shown = (struct screen_lines){ 0 };
}

static void draw_help(void)
{
	int y, w = 0, h = (int)(sizeof(help_lines) / sizeof(help_lines[0])), x0, y0;

	for (y = 0; y < h; y++)
		if ((int)strlen(help_lines[y]) > w)
			w = (int)strlen(help_lines[y]);
	y0 = LINES > h + 2 ? (LINES - h - 2) / 2 : 0;
	x0 = COLS > w + 4 ? (COLS - w - 4) / 2 : 0;
	attron(A_REVERSE);
	for (y = -1; y <= h; y++) {
		mvhline(y0 + 1 + y, x0, ' ', w + 4 < COLS ? w + 4 : COLS);
		if (y >= 0 && y < h)
			mvaddnstr(y0 + 1 + y, x0 + 2, help_lines[y], COLS - x0 - 2);
	}
	attroff(A_REVERSE);
}

void top_screen_draw(struct top_screen *ts, struct top_model *m, bool look)
{
	char l1[LINE_MAX_BYTES], l2[LINE_MAX_BYTES], title[LINE_MAX_BYTES / 2];
	int rows = LINES - 5, y;
	size_t first = 0, i;

	if (!ts->open)
		return;
	lines_of(&shown, ts, m);
	if (ts->sel >= shown.nr)
		ts->sel = shown.nr ? shown.nr - 1 : 0;
	if (rows > 0 && ts->sel >= (size_t)rows)
		first = ts->sel - rows + 1;
	erase();
	top_text_header(m, l1, l2, sizeof(l1));
	attron(A_BOLD);
	mvaddnstr(0, 0, l1, COLS);
	attroff(A_BOLD);
	mvaddnstr(1, 0, l2, COLS);
	top_text_title(m, ts->view, title, sizeof(title));
	snprintf(l1, sizeof(l1), "%s, sorted by %s%s", title,
		 sort_names[ts->view][ts->sort[ts->view]], ts->frozen ? "  [FROZEN]" : "");
	attron(A_BOLD);
	mvaddnstr(2, 0, l1, COLS);
	attroff(A_BOLD);
	attron(A_REVERSE);
	mvhline(3, 0, ' ', COLS);
	mvaddnstr(3, 0, top_text_columns(ts->view), COLS);
	attroff(A_REVERSE);
	for (y = 0, i = first; y < rows && i < shown.nr; y++, i++) {
		int attr = shown.items[i].heading ? A_BOLD :
			   i == ts->sel && ts->view == TOP_VIEW_FUNCS ? A_STANDOUT : 0;

		line_text(m, &shown.items[i], l2, sizeof(l2));
		if (attr)
			attron(attr);
		mvaddnstr(4 + y, 0, l2, COLS);
		if (attr)
			attroff(attr);
	}
	if (!shown.nr)
		mvaddnstr(4, 0, "  nothing yet", COLS);
	snprintf(l1, sizeof(l1), " %s | 1 functions 2 waits 3 syscalls  < > sort  space freeze"
		 "  p process  Enter zoom  ? help  q quit", view_names[ts->view]);
	attron(A_REVERSE);
	mvhline(LINES - 1, 0, ' ', COLS);
	mvaddnstr(LINES - 1, 0, l1, COLS);
	attroff(A_REVERSE);
	if (ts->help)
		draw_help();
	/* a command's own output may have written over the screen: repaint it all */
	if (look)
		clearok(curscr, TRUE);
	refresh();
}

/* The selectable line nearest @from in direction @dir (+1, -1), or @from. */
static size_t select_step(size_t from, int dir)
{
	size_t i = from;

	while (dir > 0 ? i + 1 < shown.nr : i > 0) {
		i += dir;
		if (!shown.items[i].heading)
			return i;
	}
	return from;
}

/* p: the next process active in the interval, in pid order, then all again. */
static void filter_next(struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->procs.nr; i++)
		if (m->procs.items[i].pid > m->filter.pid && m->procs.items[i].active) {
			m->filter.pid = m->procs.items[i].pid;
			return;
		}
	m->filter.pid = 0;
}

/* Enter: zoom into the selected function (the synthetic rows have no callers). */
static bool zoom_in(struct top_screen *ts, struct top_model *m)
{
	const char *f;

	if (ts->view != TOP_VIEW_FUNCS || ts->sel >= shown.nr || !(f = shown.items[ts->sel].func) ||
	    f[0] == '(')
		return false;
	m->zoom = f;
	ts->sel = 1;	/* the first caller, under its heading */
	return true;
}

/* Act on key @c; enum top_key bits. */
static unsigned int key(struct top_screen *ts, struct top_model *m, int c)
{
	int page = LINES > 6 ? LINES - 6 : 1;

	if (ts->help) {		/* any key closes the help */
		ts->help = false;
		return c == 'q' || c == 'Q' ? TOP_KEY_QUIT : TOP_KEY_REDRAW;
	}
	switch (c) {
	case 'q':
	case 'Q':
	case KEY_CTRL('c'):
		return TOP_KEY_QUIT;
	case '1': case 'f':
		ts->view = TOP_VIEW_FUNCS;
		break;
	case '2': case 'w':
		ts->view = TOP_VIEW_WAITS;
		break;
	case '3': case 's':
		ts->view = TOP_VIEW_SYSCALLS;
		break;
	case '\t':
		ts->view = (ts->view + 1) % TOP_VIEWS;
		break;
	case '<': case ',':
		ts->sort[ts->view] = (ts->sort[ts->view] + TOP_SORTS - 1) % TOP_SORTS;
		break;
	case '>': case '.':
		ts->sort[ts->view] = (ts->sort[ts->view] + 1) % TOP_SORTS;
		break;
	case ' ':
		ts->frozen = !ts->frozen;
		return ts->frozen ? TOP_KEY_REDRAW : TOP_KEY_REDRAW | TOP_KEY_THAW;
	case 'p':
		filter_next(m);
		return TOP_KEY_REDRAW | TOP_KEY_COMPUTE;
	case 'P':
		m->filter.pid = 0;
		return TOP_KEY_REDRAW | TOP_KEY_COMPUTE;
	case KEY_UP: case 'k':
		ts->sel = select_step(ts->sel, -1);
		break;
	case KEY_DOWN: case 'j':
		ts->sel = select_step(ts->sel, 1);
		break;
	case KEY_PPAGE:
		ts->sel = ts->sel > (size_t)page ? ts->sel - page : 0;
		break;
	case KEY_NPAGE:
		ts->sel += page;
		break;
	case KEY_HOME:
		ts->sel = 0;
		break;
	case KEY_END:
		ts->sel = shown.nr ? shown.nr - 1 : 0;
		break;
	case '\n': case '\r': case KEY_ENTER:
		return zoom_in(ts, m) ? TOP_KEY_REDRAW | TOP_KEY_COMPUTE : 0;
	case KEY_ESCAPE: case KEY_BACKSPACE: case 127: case KEY_LEFT:
		if (!m->zoom)
			return 0;
		m->zoom = NULL;
		ts->sel = 0;
		return TOP_KEY_REDRAW | TOP_KEY_COMPUTE;
	case '?': case 'h':
		ts->help = true;
		break;
	case KEY_RESIZE:
		break;
	default:
		return 0;
	}
	return TOP_KEY_REDRAW;
}

unsigned int top_screen_keys(struct top_screen *ts, struct top_model *m)
{
	unsigned int what = 0;
	int c;

	if (!ts->open)
		return 0;
	while (!(what & TOP_KEY_QUIT) && (c = getch()) != ERR) {
		/* a key acts on the view as the keys before it left it, drawn or not */
		if (what & (TOP_KEY_REDRAW | TOP_KEY_COMPUTE)) {
			if (what & TOP_KEY_COMPUTE)
				top_model_compute(m);
			lines_of(&shown, ts, m);
		}
		what |= key(ts, m, c);
	}
	return what;
}
