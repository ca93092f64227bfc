/* SPDX-License-Identifier: MIT */
/*
 * The counters and meta of the process (gtrace_counter_set, gtrace_meta_set):
 * the latest value of each, stamped with a version that grows at every
 * change, so that a connection sends what changed since it last looked and
 * a new connection sends everything.
 */
#include "target/internal.h"

#include <stdlib.h>
#include <string.h>

struct prop {
	const struct tgt_string *key;
	bool meta;
	uint64_t value;			/* a counter's */
	char *text;			/* a meta value's */
	uint64_t version;
};

static pthread_mutex_t props_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prop *props;
static uint32_t nprops, props_cap;
static uint64_t version;		/* atomic loads outside the lock */

void tgt_props_lock(void)
{
	pthread_mutex_lock(&props_lock);
}

void tgt_props_unlock(void)
{
	pthread_mutex_unlock(&props_lock);
}

/* Under props_lock: the entry of key, made if new; NULL when out of memory. */
static struct prop *find(const struct tgt_string *key, bool meta)
{
	struct prop *grown;

	for (uint32_t i = 0; i < nprops; i++)
		if (props[i].key == key && props[i].meta == meta)
			return &props[i];
	if (nprops == props_cap) {
		uint32_t cap = props_cap ? props_cap * 2 : 32;

		grown = realloc(props, cap * sizeof(*props));
		if (!grown)
			return NULL;
		props = grown;
		props_cap = cap;
	}
	props[nprops] = (struct prop){ .key = key, .meta = meta };
	return &props[nprops++];
}

static void changed(struct prop *p)
{
	p->version = version + 1;
	TGT_STORE(&version, version + 1);
}

void tgt_counter_set(const char *name, uint64_t value)
{
	const struct tgt_string *key = tgt_intern(name);
	struct prop *p;

	if (!key)
		return;
	pthread_mutex_lock(&props_lock);
	p = find(key, false);
	if (p && (!p->version || p->value != value)) {
		p->value = value;
		changed(p);
	}
	pthread_mutex_unlock(&props_lock);
}

void tgt_meta_set(const char *key_text, const char *value)
{
	const struct tgt_string *key = tgt_intern(key_text);
	size_t len = strnlen(value, TGT_NAME_MAX);
	struct prop *p;
	char *text;

	if (!key)
		return;
	pthread_mutex_lock(&props_lock);
	p = find(key, true);
	if (p && (!p->text || strncmp(p->text, value, len) || p->text[len])) {
		text = malloc(len + 1);
		if (text) {
			memcpy(text, value, len);
			text[len] = '\0';
			free(p->text);
			p->text = text;
			changed(p);
		}
	}
	pthread_mutex_unlock(&props_lock);
}

uint64_t tgt_props_version(void)
{
	return TGT_LOAD(&version);
}

int tgt_props_since(uint64_t since, struct tgt_prop_copy **out, uint64_t *now)
{
	struct tgt_prop_copy *copies;
	int n = 0;

	pthread_mutex_lock(&props_lock);
	*now = version;
	copies = calloc(nprops ? nprops : 1, sizeof(*copies));
	for (uint32_t i = 0; copies && i < nprops; i++) {
		const struct prop *p = &props[i];

		if (p->version <= since)
			continue;
		copies[n].key = p->key;
		copies[n].value = p->value;
		if (p->meta) {
			copies[n].text = strdup(p->text);
			if (!copies[n].text) {
				tgt_props_free(copies, n);
				copies = NULL;
				break;
			}
		}
		n++;
	}
	pthread_mutex_unlock(&props_lock);
	*out = copies;
	return copies ? n : -1;
}

void tgt_props_free(struct tgt_prop_copy *copies, int n)
{
	for (int i = 0; i < n; i++)
		free(copies[i].text);
	free(copies);
}

void tgt_props_reset_child(void)
{
	/* The parent's counts and facts are not the child's. */
	for (uint32_t i = 0; i < nprops; i++)
		free(props[i].text);
	nprops = 0;
	version = 0;
}
