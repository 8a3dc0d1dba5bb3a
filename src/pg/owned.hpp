// C++ objects owned by a memory context: deleted by the context's reset/delete callback, which
// runs on success and on error alike. A PostgreSQL ERROR longjmps past C++ destructors; an object
// held this way is deleted when the call's memory context goes, whichever way the call ends.
// Include after postgres_headers.hpp.
#pragma once

namespace gpu_routing::pg {

struct OwnedObject {
  void* object;
  void (*destroy)(void*);
  MemoryContextCallback callback;
};

inline void destroy_owned(void* arg) {
  OwnedObject* owned = static_cast<OwnedObject*>(arg);
  if (owned->object != nullptr && owned->destroy != nullptr) owned->destroy(owned->object);
  owned->object = nullptr;
}

// A slot in CurrentMemoryContext (palloc: outside guarded code).
inline OwnedObject* new_owned_slot() {
  OwnedObject* owned = static_cast<OwnedObject*>(palloc0(sizeof(OwnedObject)));
  owned->callback.func = destroy_owned;
  owned->callback.arg = owned;
  MemoryContextRegisterResetCallback(CurrentMemoryContext, &owned->callback);
  return owned;
}

template <typename T>
void delete_object(void* object) noexcept {
  delete static_cast<T*>(object);
}

// Called inside guarded code: takes ownership of `object`.
template <typename T>
T* own(OwnedObject* slot, T* object) {
  slot->destroy = delete_object<T>;
  slot->object = object;
  return object;
}

}  // namespace gpu_routing::pg
