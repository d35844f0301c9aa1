/* SPDX-License-Identifier: MIT */
/*
 * linux/list.h - struct list_head and its walkers, from <configfs/list.h>
 * (the list cg_children and default_groups are made of), plus the kernel
 * helpers that header leaves out.
 */
#ifndef CFS_COMPAT_LINUX_LIST_H
#define CFS_COMPAT_LINUX_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include <configfs/list.h>

static inline bool list_is_last(const struct list_head *entry,
                                const struct list_head *head)
{
    return entry->next == head;
}

static inline bool list_is_singular(const struct list_head *head)
{
    return !list_empty(head) && head->next == head->prev;
}

static inline void list_move(struct list_head *entry, struct list_head *head)
{
    list_del_init(entry);
    list_add(entry, head);
}

/* Insert @list (left unchanged, not reinitialised) after @head. */
static inline void list_splice(const struct list_head *list,
                               struct list_head *head)
{
    if (!list_empty(list)) {
        struct list_head *first = list->next;
        struct list_head *last = list->prev;
        struct list_head *at = head->next;

        first->prev = head;
        head->next = first;
        last->next = at;
        at->prev = last;
    }
}

#define list_last_entry(ptr, type, member) list_entry((ptr)->prev, type, member)
#define list_first_entry_or_null(ptr, type, member)                            \
    (list_empty(ptr) ? NULL : list_first_entry(ptr, type, member))
#define list_next_entry(pos, member)                                           \
    list_entry((pos)->member.next, __typeof__(*(pos)), member)
#define list_prev_entry(pos, member)                                           \
    list_entry((pos)->member.prev, __typeof__(*(pos)), member)

#define list_for_each_entry_reverse(pos, head, member)                         \
    for ((pos) = list_last_entry(head, __typeof__(*(pos)), member);            \
         &(pos)->member != (head);                                             \
         (pos) = list_prev_entry(pos, member))

#endif /* CFS_COMPAT_LINUX_LIST_H */
