// SPDX-License-Identifier: GPL-2.0-only
/* YAML configuration files as command-line options (config.h), with libyaml. */
#include "src/config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "src/lib/util.h"

struct config_parser {
	yaml_parser_t p;
	yaml_event_t ev;
	bool have_ev;
	const struct option *longopts;
	const char *const *refused, *const *repeated;
	struct config_args *out;
	struct config_error *e;
};

static int fail(struct config_parser *c, size_t line, const char *fmt, const char *arg)
{
	c->e->line = line;
	snprintf(c->e->reason, sizeof(c->e->reason), fmt, arg ? arg : "");
	return -EINVAL;
}

/* The next event (the previous one freed); -EINVAL on a YAML error. */
static int next(struct config_parser *c)
{
	if (c->have_ev)
		yaml_event_delete(&c->ev);
	c->have_ev = yaml_parser_parse(&c->p, &c->ev);
	if (c->have_ev)
		return 0;
	c->e->line = c->p.problem_mark.line + 1;
	snprintf(c->e->reason, sizeof(c->e->reason), "bad YAML: %s",
		 c->p.problem ? c->p.problem : "unknown error");
	return -EINVAL;
}

static size_t line_of(const struct config_parser *c)
{
	return c->ev.start_mark.line + 1;
}

static bool in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

static const struct option *option_named(const struct config_parser *c, const char *key)
{
	const struct option *o;

	if (in_list(c->refused, key))
		return NULL;
	for (o = c->longopts; o->name; o++)
		if (!strcmp(o->name, key))
			return o;
	return NULL;
}

static int push(struct config_parser *c, const char *key, const char *value)
{
	char *s;

	if (c->out->nr >= CONFIG_MAX_ARGS)
		return fail(c, line_of(c), "more than %s options", "1024");
	if (value ? asprintf(&s, "--%s=%s", key, value) < 0 : asprintf(&s, "--%s", key) < 0)
		return -ENOMEM;
	if (array_grow(c->out, c->out->nr + 1)) {
		free(s);
		return -ENOMEM;
	}
	c->out->items[c->out->nr++] = s;
	return 0;
}

static const char *scalar(const struct config_parser *c)
{
	return (const char *)c->ev.data.scalar.value;
}

/* A flag's value: true or false (YAML 1.1 spellings too). */
static int flag_value(struct config_parser *c, const struct option *o)
{
	static const char *const yes[] = { "true", "yes", "on", NULL };
	static const char *const no[] = { "false", "no", "off", NULL };

	if (c->ev.type != YAML_SCALAR_EVENT ||
	    (!in_list(yes, scalar(c)) && !in_list(no, scalar(c))))
		return fail(c, line_of(c), "%s is a flag: want true or false", o->name);
	return in_list(yes, scalar(c)) ? push(c, o->name, NULL) : 0;
}

/*
 * A mapping of plain values, an item of a repeated option's list, as one
 * value "KEY=VALUE,KEY=VALUE" (serve's trigger rules); the mapping's start
 * is the current event. No key or value may hold a ',' or a '='.
 */
static int mapping_value(struct config_parser *c, const struct option *o)
{
	char joined[512];
	size_t len = 0;
	int err, n;

	joined[0] = 0;
	while (!(err = next(c)) && c->ev.type == YAML_SCALAR_EVENT) {
		char key[64];

		snprintf(key, sizeof(key), "%s", scalar(c));
		err = next(c);
		if (err)
			return err;
		if (c->ev.type != YAML_SCALAR_EVENT)
			return fail(c, line_of(c), "%s: a rule's values are plain values", o->name);
		if (strpbrk(key, ",=") || strpbrk(scalar(c), ",="))
			return fail(c, line_of(c), "%s: no ',' or '=' in a rule's keys and values",
				    o->name);
		n = snprintf(joined + len, sizeof(joined) - len, "%s%s=%s", len ? "," : "", key,
			     scalar(c));
		if (n < 0 || (size_t)n >= sizeof(joined) - len)
			return fail(c, line_of(c), "%s: a rule longer than 511 characters", o->name);
		len += n;
	}
	if (!err && c->ev.type != YAML_MAPPING_END_EVENT)
		return fail(c, line_of(c), "%s: a rule's keys are plain names", o->name);
	return err ? err : push(c, o->name, joined);
}

/* A list's items, joined by ',' into @joined or pushed one by one. */
static int list_value(struct config_parser *c, const struct option *o)
{
	bool each = in_list(c->repeated, o->name);
	char *joined = NULL;
	size_t len = 0;
	int err;

	while (!(err = next(c)) && (c->ev.type == YAML_SCALAR_EVENT ||
				    (each && c->ev.type == YAML_MAPPING_START_EVENT))) {
		size_t n = c->ev.data.scalar.length;
		char *j;

		if (c->ev.type == YAML_MAPPING_START_EVENT) {
			err = mapping_value(c, o);
			if (err)
				break;
			continue;
		}
		if (each) {
			err = push(c, o->name, scalar(c));
			if (err)
				break;
			continue;
		}
		if (len + n + 2 > CONFIG_MAX_BYTES) {
			err = fail(c, line_of(c), "the list of %s is too long", o->name);
			break;
		}
		j = realloc(joined, len + n + 2);
		if (!j) {
			err = -ENOMEM;
			break;
		}
		joined = j;
		if (len)
			joined[len++] = ',';
		memcpy(joined + len, scalar(c), n + 1);
		len += n;
	}
	if (!err && c->ev.type != YAML_SEQUENCE_END_EVENT)
		err = fail(c, line_of(c), "%s: a list holds plain values, not lists or mappings",
			   o->name);
	if (!err && !each && joined)
		err = push(c, o->name, joined);
	free(joined);
	return err;
}

/* One "key: value" of the top-level mapping; the key is the current event. */
static int entry(struct config_parser *c)
{
	const struct option *o;
	char key[64];
	int err;

	if (c->ev.type != YAML_SCALAR_EVENT)
		return fail(c, line_of(c), "a key must be an option name%s", NULL);
	snprintf(key, sizeof(key), "%s", scalar(c));
	o = option_named(c, key);
	if (!o)
		return fail(c, line_of(c), "unknown key '%.40s' (keys are record's long options)",
			    key);
	err = next(c);
	if (err)
		return err;
	if (o->has_arg == no_argument)
		return flag_value(c, o);
	if (c->ev.type == YAML_SEQUENCE_START_EVENT)
		return list_value(c, o);
	if (c->ev.type != YAML_SCALAR_EVENT)
		return fail(c, line_of(c), "%s: want a value or a list of values", o->name);
	return push(c, o->name, scalar(c));
}

/* The document: nothing, or one mapping of entries. */
static int document(struct config_parser *c)
{
	int err;

	while (!(err = next(c)) && c->ev.type != YAML_STREAM_END_EVENT) {
		if (c->ev.type == YAML_DOCUMENT_START_EVENT || c->ev.type == YAML_DOCUMENT_END_EVENT)
			continue;
		if (c->ev.type == YAML_SCALAR_EVENT && !c->ev.data.scalar.length)
			continue;	/* an empty document */
		if (c->ev.type != YAML_MAPPING_START_EVENT)
			return fail(c, line_of(c), "want a mapping of option: value%s", NULL);
		while (!(err = next(c)) && c->ev.type != YAML_MAPPING_END_EVENT) {
			err = entry(c);
			if (err)
				return err;
		}
		if (err)
			return err;
	}
	return err;
}

int config_parse(const char *buf, size_t len, const struct option *longopts,
		 const char *const *refused, const char *const *repeated,
		 struct config_args *out, struct config_error *e)
{
	struct config_parser c = { .longopts = longopts, .refused = refused,
				   .repeated = repeated, .out = out, .e = e };
	int err;

	*e = (struct config_error){ 0 };
	if (len > CONFIG_MAX_BYTES) {
		snprintf(e->reason, sizeof(e->reason), "larger than %d bytes", CONFIG_MAX_BYTES);
		return -EINVAL;
	}
	if (memchr(buf, '\0', len)) {
		snprintf(e->reason, sizeof(e->reason), "a NUL byte: not a text file");
		return -EINVAL;
	}
	if (!yaml_parser_initialize(&c.p))
		return -ENOMEM;
	yaml_parser_set_input_string(&c.p, (const unsigned char *)buf, len);
	err = next(&c);
	if (!err && c.ev.type != YAML_STREAM_START_EVENT)
		err = fail(&c, line_of(&c), "bad YAML stream%s", NULL);
	if (!err)
		err = document(&c);
	if (c.have_ev)
		yaml_event_delete(&c.ev);
	yaml_parser_delete(&c.p);
	return err;
}

void config_args_release(struct config_args *a)
{
	size_t i;

	for (i = 0; i < a->nr; i++)
		free(a->items[i]);
	free(a->items);
	*a = (struct config_args){ 0 };
}
