/* SPDX-License-Identifier: MIT */
/*
 * NVTX ranges, through CUPTI's NVTX callbacks on the application's threads.
 * Push/pop ranges nest per thread and per NVTX domain (a library's ranges
 * in its own domain do not close the application's): each thread keeps a
 * stack per domain it pushed in, the default domain (handle NULL, as NVTX
 * has it) one of them. A start/end range may end on another thread: open
 * ones are kept in a table by range id. A range becomes a span on its
 * domain's lane when it closes, its origin the thread that opened it and
 * when: the default domain's "NVTX", a named domain's "NVTX <domain>",
 * named when nvtxDomainCreateA/W made it (contract/lanes.h).
 */
#include "cuda/agent.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <generated_nvtx_meta.h>

#include "contract/attrs.h"
#include "contract/lanes.h"

#define NAME_MAX_BYTES 1024
#define MAX_DEPTH 1024			/* deeper pushes are counted, not kept */
#define MAX_DOMAINS 64			/* per thread, with ranges open; more are dropped */
#define MAX_OPEN 65536			/* start/end ranges never ended are dropped past this */
#define MAX_NAMED_DOMAINS 256		/* not destroyed; more go on the unnamed lane */

struct frame {
	char *name;
	gtrace_lane *lane;		/* its domain's */
	uint64_t start;
};

struct stack {
	const void *domain;		/* nvtxDomainHandle_t, NULL the default */
	unsigned depth, cap;
	unsigned overflow;		/* pushes past MAX_DEPTH not yet popped */
	struct frame *frames;
};

/* A thread's stacks, one per domain it pushed in. */
struct stacks {
	unsigned n, cap;
	struct stack *v;
};

struct open_range {
	struct open_range *next;
	uint64_t id;
	uint32_t tid;
	uint64_t start;
	char *name;
	gtrace_lane *lane;		/* its domain's */
};

struct registered {
	struct registered *next;
	const void *handle;
	char *name;
};

/* A domain that nvtxDomainCreateA/W made, and the lane of its ranges. */
struct domain {
	struct domain *next;
	const void *handle;
	gtrace_lane *lane;
};

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t stack_key;
static int key_err;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct open_range *open_ranges;
static unsigned nopen;
static struct registered *strings;
static struct domain *domains;
static unsigned ndomains;

static void free_stacks(void *p)
{
	struct stacks *t = p;

	for (unsigned i = 0; i < t->n; i++) {
		struct stack *s = &t->v[i];

		while (s->depth)
			free(s->frames[--s->depth].name);
		free(s->frames);
	}
	free(t->v);
	free(t);
}

static void make_key(void)
{
	key_err = pthread_key_create(&stack_key, free_stacks);
}

static struct stacks *my_stacks(void)
{
	struct stacks *t;

	pthread_once(&key_once, make_key);
	if (key_err)
		return NULL;
	t = pthread_getspecific(stack_key);
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (t && pthread_setspecific(stack_key, t)) {
			free(t);
			t = NULL;
		}
	}
	return t;
}

/*
 * The calling thread's stack of domain, made on its first push (create),
 * in place of an empty one past MAX_DOMAINS; NULL when there is none, or
 * no room for one. A push refused so is lost but closes nothing: its pop
 * comes after those of later pushes, when the domain's stack, if it got
 * one since, is empty again.
 */
static struct stack *my_stack(const void *domain, bool create)
{
	struct stacks *t = my_stacks();
	struct stack *grown;

	if (!t)
		return NULL;
	for (unsigned i = 0; i < t->n; i++)
		if (t->v[i].domain == domain)
			return &t->v[i];
	if (!create)
		return NULL;
	if (t->n == MAX_DOMAINS) {
		for (unsigned i = 0; i < t->n; i++) {
			if (!t->v[i].depth && !t->v[i].overflow) {
				t->v[i].domain = domain;
				return &t->v[i];
			}
		}
		return NULL;
	}
	if (t->n == t->cap) {
		unsigned cap = t->cap ? t->cap * 2 : 4;

		grown = realloc(t->v, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		t->v = grown;
		t->cap = cap;
	}
	t->v[t->n] = (struct stack){ .domain = domain };
	return &t->v[t->n++];
}

/* UTF-8 of a wide string, cut at NAME_MAX_BYTES. */
static char *from_wide(const wchar_t *w)
{
	char *out = malloc(NAME_MAX_BYTES + 1), *p = out;
	char *end = out + NAME_MAX_BYTES;

	if (!out)
		return NULL;
	for (; *w; w++) {
		uint32_t c = (uint32_t)*w;
		int n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

		if (c > 0x10ffff)
			c = '?', n = 1;
		if (end - p < n)
			break;
		if (n == 1) {
			*p++ = (char)c;
			continue;
		}
		for (int i = n - 1; i > 0; i--)
			p[i] = (char)(0x80 | ((c >> (6 * (n - 1 - i))) & 0x3f));
		p[0] = (char)((0xf0 << (4 - n)) | (c >> (6 * (n - 1))));
		p += n;
	}
	*p = '\0';
	return out;
}

static char *copy_name(const char *s)
{
	return s ? strndup(s, NAME_MAX_BYTES) : strdup("[unnamed range]");
}

static char *registered_name(const void *handle)
{
	char *name = NULL;

	pthread_mutex_lock(&table_lock);
	for (struct registered *r = strings; r && !name; r = r->next)
		if (r->handle == handle)
			name = strdup(r->name);
	pthread_mutex_unlock(&table_lock);
	return name ? name : strdup("[unregistered string]");
}

static char *attributes_name(const nvtxEventAttributes_t *a)
{
	if (!a || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return copy_name(NULL);
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return copy_name(a->message.ascii);
	case NVTX_MESSAGE_TYPE_UNICODE:
		return a->message.unicode ? from_wide(a->message.unicode) : copy_name(NULL);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		return registered_name(a->message.registered);
	default:
		return copy_name(NULL);
	}
}

/* The entry of a domain handle, NULL when it has none; under table_lock. */
static struct domain **find_domain(const void *handle)
{
	struct domain **p = &domains;

	while (*p && (*p)->handle != handle)
		p = &(*p)->next;
	return *p ? p : NULL;
}

/*
 * The lane of domain's ranges: the default domain's (NULL), the one it was
 * made with, or, for a domain made before the agent listened or past
 * MAX_NAMED_DOMAINS, the unnamed domains' lane.
 */
static gtrace_lane *domain_lane(const void *domain)
{
	struct domain **known;
	gtrace_lane *lane = NULL;

	if (!domain)
		return agent_nvtx_lane;
	pthread_mutex_lock(&table_lock);
	if ((known = find_domain(domain)))
		lane = (*known)->lane;
	pthread_mutex_unlock(&table_lock);
	return lane ? lane : gtrace_lane_get(NVTX_LANE_KIND, NVTX_UNNAMED_DOMAIN_LANE);
}

static void emit(gtrace_lane *lane, const char *name, uint32_t tid, uint64_t start,
		 const gtrace_attr *a, unsigned n)
{
	gtrace_origin o = { .tid = tid, .ts_ns = start };

	gtrace_span_attrs(lane, name, start, gtrace_now_ns(), &o, a, n);
}

/* Takes name (may be NULL: no memory, the range still nests). */
static void push(const void *domain, char *name)
{
	struct stack *s = my_stack(domain, true);
	struct frame *grown;

	if (!s || s->depth == MAX_DEPTH || s->overflow) {
		if (s)
			s->overflow++;
		free(name);
		return;
	}
	if (s->depth == s->cap) {
		unsigned cap = s->cap ? s->cap * 2 : 16;

		grown = realloc(s->frames, cap * sizeof(*grown));
		if (!grown) {
			s->overflow++;
			free(name);
			return;
		}
		s->frames = grown;
		s->cap = cap;
	}
	s->frames[s->depth].name = name;
	s->frames[s->depth].lane = domain_lane(domain);
	s->frames[s->depth].start = gtrace_now_ns();
	s->depth++;
}

static void pop(const void *domain)
{
	struct stack *s = my_stack(domain, false);
	struct frame *f;

	if (!s)
		return;
	if (s->overflow) {
		s->overflow--;
		return;
	}
	if (!s->depth)
		return;		/* a pop without its push: nothing to close */
	f = &s->frames[--s->depth];
	if (f->name) {
		gtrace_attr a[] = {
			{ .key = NVTX_ATTR_DEPTH, .value = s->depth },
			{ .key = NVTX_ATTR_KIND, .value = NVTX_KIND_PUSH_POP },
		};

		emit(f->lane, f->name, agent_tid(), f->start, a, 2);
	}
	free(f->name);
}

/* Takes name. */
static void start(const void *domain, const void *id, char *name)
{
	struct open_range *r = malloc(sizeof(*r));

	if (!id || !*(const nvtxRangeId_t *)id || !r || !name) {
		free(r);
		free(name);
		return;
	}
	r->id = *(const nvtxRangeId_t *)id;
	r->tid = agent_tid();
	r->start = gtrace_now_ns();
	r->name = name;
	r->lane = domain_lane(domain);
	pthread_mutex_lock(&table_lock);
	if (nopen < MAX_OPEN) {
		r->next = open_ranges;
		open_ranges = r;
		nopen++;
		r = NULL;
	}
	pthread_mutex_unlock(&table_lock);
	if (r) {
		free(r->name);
		free(r);
	}
}

static void end(nvtxRangeId_t id)
{
	struct open_range *r = NULL;
	gtrace_attr a[] = { { .key = NVTX_ATTR_KIND, .value = NVTX_KIND_START_END } };

	pthread_mutex_lock(&table_lock);
	for (struct open_range **p = &open_ranges; *p; p = &(*p)->next) {
		if ((*p)->id == id) {
			r = *p;
			*p = r->next;
			nopen--;
			break;
		}
	}
	pthread_mutex_unlock(&table_lock);
	if (!r)
		return;
	emit(r->lane, r->name, r->tid, r->start, a, 1);
	free(r->name);
	free(r);
}

static void register_string(const void *handle, char *name)
{
	struct registered *r = malloc(sizeof(*r));

	if (!handle || !*(void *const *)handle || !r || !name) {
		free(r);
		free(name);
		return;
	}
	r->handle = *(void *const *)handle;
	r->name = name;
	pthread_mutex_lock(&table_lock);
	r->next = strings;
	strings = r;
	pthread_mutex_unlock(&table_lock);
}

/* Takes name (NULL or empty: the domain stays unnamed). */
static void create_domain(const void *handle, char *name)
{
	char lane_name[sizeof(NVTX_DOMAIN_LANE_PREFIX) + NAME_MAX_BYTES];
	struct domain *d, **known;
	gtrace_lane *lane;

	if (!handle || !*(void *const *)handle || !name || !*name) {
		free(name);
		return;
	}
	snprintf(lane_name, sizeof(lane_name), NVTX_DOMAIN_LANE_PREFIX "%s", name);
	free(name);
	lane = gtrace_lane_get(NVTX_LANE_KIND, lane_name);
	d = malloc(sizeof(*d));
	if (!lane || !d) {
		free(d);
		return;
	}
	d->handle = *(void *const *)handle;
	d->lane = lane;
	pthread_mutex_lock(&table_lock);
	/* A name made again gives its first handle back. */
	if ((known = find_domain(d->handle))) {
		(*known)->lane = lane;
	} else if (ndomains < MAX_NAMED_DOMAINS) {
		d->next = domains;
		domains = d;
		ndomains++;
		d = NULL;
	}
	pthread_mutex_unlock(&table_lock);
	free(d);
}

/* Its handle may be given to a domain made later. */
static void destroy_domain(const void *handle)
{
	struct domain *d = NULL, **known;

	pthread_mutex_lock(&table_lock);
	if ((known = find_domain(handle))) {
		d = *known;
		*known = d->next;
		ndomains--;
	}
	pthread_mutex_unlock(&table_lock);
	free(d);
}

void nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *d)
{
	const void *p = d->functionParams;

	if (!p && cbid != CUPTI_CBID_NVTX_nvtxRangePop)
		return;
	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		push(NULL, copy_name(((const nvtxRangePushA_params *)p)->message));
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushW:
		push(NULL, from_wide(((const nvtxRangePushW_params *)p)->message));
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		push(NULL, attributes_name(((const nvtxRangePushEx_params *)p)->eventAttrib));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
		const nvtxDomainRangePushEx_params *q = p;

		push(q->domain, attributes_name(q->core.eventAttrib));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePop:
		pop(NULL);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		pop(((const nvtxDomainRangePop_params *)p)->domain);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
		start(NULL, d->functionReturnValue,
		      copy_name(((const nvtxRangeStartA_params *)p)->message));
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartW:
		start(NULL, d->functionReturnValue,
		      from_wide(((const nvtxRangeStartW_params *)p)->message));
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		start(NULL, d->functionReturnValue,
		      attributes_name(((const nvtxRangeStartEx_params *)p)->eventAttrib));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
		const nvtxDomainRangeStartEx_params *q = p;

		start(q->domain, d->functionReturnValue, attributes_name(q->core.eventAttrib));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangeEnd:
		end(((const nvtxRangeEnd_params *)p)->id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
		end(((const nvtxDomainRangeEnd_params *)p)->core.id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
		const char *name = ((const nvtxDomainCreateA_params *)p)->name;

		create_domain(d->functionReturnValue, name ? strndup(name, NAME_MAX_BYTES) : NULL);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainCreateW: {
		/* The header has no struct of its own: the A one's, its string wide. */
		const wchar_t *name = (const wchar_t *)(const void *)
			((const nvtxDomainCreateA_params *)p)->name;

		create_domain(d->functionReturnValue, name ? from_wide(name) : NULL);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainDestroy:
		destroy_domain(((const nvtxDomainDestroy_params *)p)->domain);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
		register_string(d->functionReturnValue,
				copy_name(((const nvtxDomainRegisterStringA_params *)p)->string));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW:
		/* The header types the string as char; the function takes wchar_t. */
		register_string(d->functionReturnValue,
				from_wide((const wchar_t *)(const void *)
					  ((const nvtxDomainRegisterStringW_params *)p)->string));
		break;
	default:
		break;
	}
}
