#include "redis/reply_pool.hpp"

#include <cstdlib>
#include <cstring>

#include <hiredis/hiredis.h>

namespace rlcheck::redis {
namespace {

constexpr size_t k_inline_elements = 4;
constexpr size_t k_inline_text = 40;  // with its terminating NUL
constexpr size_t k_most_kept = 1024;  // blocks a thread keeps for reuse

struct Block {
  redisReply reply;  // first: a Block* and its reply's address are the same
  // Built by pooled_integers: the reply and its elements are this block alone, nothing else
  // to free.
  bool integers_only = false;
  redisReply* elements[k_inline_elements];
  char text[k_inline_text];
  // An array of integers read by the scanner keeps its elements here, in its own block.
  redisReply integers[k_inline_elements];
};

// The thread's free blocks, linked through their reply's element pointer.
class FreeBlocks {
 public:
  FreeBlocks() = default;
  FreeBlocks(const FreeBlocks&) = delete;
  FreeBlocks& operator=(const FreeBlocks&) = delete;
  ~FreeBlocks() {
    while (head_ != nullptr)
      std::free(take());
  }

  Block* take() {
    Block* block = head_;
    if (block == nullptr)
      return static_cast<Block*>(std::malloc(sizeof(Block)));
    head_ = reinterpret_cast<Block*>(block->reply.element);
    --count_;
    return block;
  }

  void give(Block* block) {
    if (count_ >= k_most_kept) {
      std::free(block);
      return;
    }
    block->reply.element = reinterpret_cast<redisReply**>(head_);
    head_ = block;
    ++count_;
  }

 private:
  Block* head_ = nullptr;
  size_t count_ = 0;
};

thread_local FreeBlocks t_free_blocks;

redisReply* new_reply(const redisReadTask* task, int type) {
  Block* block = t_free_blocks.take();
  if (block == nullptr)
    return nullptr;
  block->integers_only = false;
  redisReply* reply = &block->reply;
  std::memset(reply, 0, sizeof *reply);
  reply->type = type;
  if (task->parent != nullptr) {
    auto* parent = static_cast<redisReply*>(task->parent->obj);
    parent->element[task->idx] = reply;
  }
  return reply;
}

Block* block_of(redisReply* reply) {
  return reinterpret_cast<Block*>(reply);
}

void* create_string(const redisReadTask* task, char* text, size_t length) {
  char* copy = length < k_inline_text ? nullptr : static_cast<char*>(std::malloc(length + 1));
  if (length >= k_inline_text && copy == nullptr)
    return nullptr;
  redisReply* reply = new_reply(task, task->type);
  if (reply == nullptr) {
    std::free(copy);
    return nullptr;
  }
  if (copy == nullptr)
    copy = block_of(reply)->text;
  std::memcpy(copy, text, length);
  copy[length] = '\0';
  reply->str = copy;
  reply->len = length;
  return reply;
}

void* create_array(const redisReadTask* task, int count) {
  const size_t elements = count > 0 ? static_cast<size_t>(count) : 0;
  redisReply** storage = nullptr;
  if (elements > k_inline_elements) {
    storage = static_cast<redisReply**>(std::calloc(elements, sizeof(redisReply*)));
    if (storage == nullptr)
      return nullptr;
  }
  redisReply* reply = new_reply(task, REDIS_REPLY_ARRAY);
  if (reply == nullptr) {
    std::free(storage);
    return nullptr;
  }
  if (storage == nullptr && elements > 0) {
    storage = block_of(reply)->elements;
    std::memset(storage, 0, elements * sizeof(redisReply*));
  }
  reply->element = storage;
  reply->elements = elements;
  return reply;
}

void* create_integer(const redisReadTask* task, long long value) {
  redisReply* reply = new_reply(task, REDIS_REPLY_INTEGER);
  if (reply != nullptr)
    reply->integer = value;
  return reply;
}

void* create_nil(const redisReadTask* task) {
  return new_reply(task, REDIS_REPLY_NIL);
}

}  // namespace

redisReply* pooled_integers(const long long* values, size_t count, bool array) {
  if (count > k_inline_elements || (!array && count != 1))
    return nullptr;
  Block* block = t_free_blocks.take();
  if (block == nullptr)
    return nullptr;
  block->integers_only = true;
  redisReply* reply = &block->reply;
  std::memset(reply, 0, sizeof *reply);
  if (!array) {
    reply->type = REDIS_REPLY_INTEGER;
    reply->integer = values[0];
    return reply;
  }
  reply->type = REDIS_REPLY_ARRAY;
  reply->elements = count;
  reply->element = block->elements;
  for (size_t i = 0; i < count; ++i) {
    redisReply* element = &block->integers[i];
    std::memset(element, 0, sizeof *element);
    element->type = REDIS_REPLY_INTEGER;
    element->integer = values[i];
    block->elements[i] = element;
  }
  return reply;
}

redisReplyObjectFunctions pooled_reply_functions() {
  return {create_string, create_array, create_integer, create_nil, free_reply};
}

void free_reply(void* object) {
  auto* reply = static_cast<redisReply*>(object);
  if (reply == nullptr)
    return;
  Block* block = block_of(reply);
  if (block->integers_only) {
    t_free_blocks.give(block);
    return;
  }
  switch (reply->type) {
    case REDIS_REPLY_ARRAY:
      for (size_t i = 0; reply->element != nullptr && i < reply->elements; ++i)
        free_reply(reply->element[i]);
      if (reply->element != block->elements)
        std::free(reply->element);
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      if (reply->str != block->text)
        std::free(reply->str);
      break;
    default:
      break;
  }
  t_free_blocks.give(block);
}

}  // namespace rlcheck::redis
