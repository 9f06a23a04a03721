// The Vulkan backend: each run of nodes the scheduler hands it becomes one command buffer of
// compute dispatches (a barrier between dependent ones), recorded on the first compute after
// a graph is planned and replayed while the graph, its memory and its parameters stay the
// same. Operands are bound per dispatch as (VkBuffer, offset); every node's parameters live
// in a host-visible buffer written at record time.
#include "backend/vulkan/vk_backend.hpp"
#include "backend/vulkan/vk_buffer.hpp"
#include "backend/vulkan/vk_ops.hpp"
#include "pocket/error.hpp"

#include <array>
#include <cstring>
#include <map>
#include <vector>

namespace pocket::vulkan {

namespace {

constexpr int kOperands = 5;   // src0..src3, dst

class VulkanBackend final : public Backend {
public:
    explicit VulkanBackend(VulkanDevice& device) : device_(device), gpu_(device.gpu()) {
        dummy_ = gpu_.allocate(256, false);
    }
    ~VulkanBackend() override {
        clear_recordings();
        gpu_.release(dummy_);
    }

    Device& device() const override { return device_; }

    bool can_access(const Tensor& t) const override {
        const Buffer* b = t.base()->buffer;
        return b && &b->device() == &device_;
    }

    bool supports_op(const Tensor& node) const override { return supports(gpu_, node); }

    void reserve(std::span<Tensor* const>) override { clear_recordings(); }

    void compute(std::span<Tensor* const> nodes) override {
        const Key key{nodes.data(), nodes.size()};
        signature(nodes, sig_);   // into a reused vector: this runs once per token
        auto it = recordings_.find(key);
        if (it == recordings_.end() || it->second.signature != sig_) {
            if (it != recordings_.end()) {
                free_recording(it->second);
                recordings_.erase(it);
            }
            it = recordings_.emplace(key, record(nodes)).first;
            it->second.signature = sig_;
        }
        if (it->second.cmd == VK_NULL_HANDLE) return;   // views only
        std::lock_guard lock(gpu_.queue_mutex());
        gpu_.submit_locked(it->second.cmd);
    }

private:
    using Key = std::pair<Tensor* const*, size_t>;
    struct Recording {
        std::vector<uint64_t> signature;
        VkCommandBuffer cmd = VK_NULL_HANDLE;
        VkDescriptorPool pool = VK_NULL_HANDLE;
        Gpu::Allocation params;
    };

    // What a recording depends on: the nodes, their operands' addresses and parameters.
    static void signature(std::span<Tensor* const> nodes, std::vector<uint64_t>& s) {
        s.clear();
        for (const Tensor* n : nodes) {
            s.push_back(reinterpret_cast<uintptr_t>(n));
            s.push_back(reinterpret_cast<uintptr_t>(n->data));
            for (const Tensor* src : n->src) s.push_back(src ? reinterpret_cast<uintptr_t>(src->data) : 0);
            uint64_t words[8];
            std::memcpy(words, n->op_params.data(), sizeof words);
            s.insert(s.end(), words, words + 8);
        }
    }

    // The operand's binding: its buffer at an offset rounded down to the device's alignment.
    struct Binding {
        VkBuffer buffer;
        uint64_t offset, range;
        uint32_t remainder;
    };
    Binding bind(const Tensor& t) const {
        const Buffer* b = t.base()->buffer;
        const auto* vb = dynamic_cast<const VulkanBuffer*>(b);
        if (!vb || &vb->device() != &device_)
            throw Error("{}: {} is not in its memory (a missing copy)", device_.name(), tensor_desc(t));
        const uint64_t at = vb->offset_of(t.data, t.nbytes());
        const uint64_t align = gpu_.binding_align();
        const uint64_t start = at / align * align;
        const uint64_t end = std::min<uint64_t>(vb->size(), (at + t.nbytes() + 3) / 4 * 4);
        return {vb->vk(), start, std::max<uint64_t>(end - start, 4), static_cast<uint32_t>(at - start)};
    }

    Recording record(std::span<Tensor* const> nodes) {
        std::vector<const Tensor*> work;
        for (const Tensor* n : nodes)
            if (!op_is_view(n->op)) work.push_back(n);
        Recording r;
        if (work.empty()) return r;
        const uint32_t n = static_cast<uint32_t>(work.size());

        std::array<VkDescriptorPoolSize, 2> sizes{{{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, n * kOperands},
                                                   {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, n}}};
        VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
        pi.maxSets = n;
        pi.poolSizeCount = 2;
        pi.pPoolSizes = sizes.data();
        check(vkCreateDescriptorPool(gpu_.device(), &pi, nullptr, &r.pool), "vkCreateDescriptorPool");
        try {
            r.params = gpu_.allocate(uint64_t{n} * kParamsStride, true);
            std::vector<VkDescriptorSetLayout> layouts(n, gpu_.set_layout());
            std::vector<VkDescriptorSet> sets(n);
            VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
            ai.descriptorPool = r.pool;
            ai.descriptorSetCount = n;
            ai.pSetLayouts = layouts.data();
            check(vkAllocateDescriptorSets(gpu_.device(), &ai, sets.data()), "vkAllocateDescriptorSets");

            VkCommandBufferAllocateInfo ci{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
            ci.commandPool = gpu_.command_pool();
            ci.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
            ci.commandBufferCount = 1;
            {
                std::lock_guard lock(gpu_.queue_mutex());   // the pool is shared with uploads
                check(vkAllocateCommandBuffers(gpu_.device(), &ci, &r.cmd), "vkAllocateCommandBuffers");
            }
            VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            check(vkBeginCommandBuffer(r.cmd, &bi), "vkBeginCommandBuffer");
            // Earlier transfers and dispatches (uploads, other runs) before these reads.
            barrier(r.cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT);

            for (uint32_t i = 0; i < n; ++i) {
                const Tensor& node = *work[i];
                NodeParams p;
                const Dispatch d = encode(gpu_, node, p);
                std::array<VkDescriptorBufferInfo, kOperands + 1> infos{};
                for (int s = 0; s < kOperands; ++s) {
                    const Tensor* t = s < 4 ? node.src[s] : &node;
                    if (!t) {
                        infos[s] = {dummy_.buffer, 0, VK_WHOLE_SIZE};
                        continue;
                    }
                    const Binding b = bind(*t);
                    infos[s] = {b.buffer, b.offset, b.range};
                    if (s < 4) p.offs[s] = b.remainder;
                    else p.offs_d[0] = b.remainder;
                }
                std::memcpy(static_cast<uint8_t*>(r.params.mapped) + uint64_t{i} * kParamsStride, &p, sizeof p);
                infos[kOperands] = {r.params.buffer, uint64_t{i} * kParamsStride, sizeof(NodeParams)};
                std::array<VkWriteDescriptorSet, kOperands + 1> writes{};
                for (int s = 0; s <= kOperands; ++s) {
                    writes[s] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
                    writes[s].dstSet = sets[i];
                    writes[s].dstBinding = static_cast<uint32_t>(s);
                    writes[s].descriptorCount = 1;
                    writes[s].descriptorType = s < kOperands ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
                    writes[s].pBufferInfo = &infos[s];
                }
                vkUpdateDescriptorSets(gpu_.device(), static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
                vkCmdBindPipeline(r.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, gpu_.pipeline(d.shader, d.spec0, d.spec1, d.spec2));
                vkCmdBindDescriptorSets(r.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, gpu_.pipeline_layout(), 0, 1, &sets[i], 0, nullptr);
                vkCmdDispatch(r.cmd, d.groups[0], d.groups[1], d.groups[2]);
                barrier(r.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT);
            }
            check(vkEndCommandBuffer(r.cmd), "vkEndCommandBuffer");
        } catch (...) {
            free_recording(r);
            throw;
        }
        return r;
    }

    // Makes earlier writes (from src_stage) visible to everything that follows.
    static void barrier(VkCommandBuffer cmd, VkPipelineStageFlags src_stage, VkAccessFlags src_access) {
        VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = src_access;
        mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                           VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
        vkCmdPipelineBarrier(cmd, src_stage,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                             &mb, 0, nullptr, 0, nullptr);
    }

    void free_recording(Recording& r) {
        if (r.cmd) {
            std::lock_guard lock(gpu_.queue_mutex());
            vkFreeCommandBuffers(gpu_.device(), gpu_.command_pool(), 1, &r.cmd);
        }
        if (r.pool) vkDestroyDescriptorPool(gpu_.device(), r.pool, nullptr);
        gpu_.release(r.params);
        r = {};
    }

    void clear_recordings() {
        for (auto& [k, r] : recordings_) free_recording(r);
        recordings_.clear();
    }

    VulkanDevice& device_;
    Gpu& gpu_;
    Gpu::Allocation dummy_;
    std::map<Key, Recording> recordings_;
    std::vector<uint64_t> sig_;
};

}  // namespace

std::unique_ptr<Backend> make_backend(VulkanDevice& device) { return std::make_unique<VulkanBackend>(device); }

}  // namespace pocket::vulkan
