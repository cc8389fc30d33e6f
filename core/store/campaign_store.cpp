#include "core/store/campaign_store.h"

#include "core/model/error.h"
#include "core/store/schema.h"
#include "core/store/session_owner.h"
#include "core/store/store_impl.h"

namespace kl::store {

struct CampaignStore::Impl {
    std::optional<Database> db; // none: a read-only file from before campaigns
    std::string file;
};

namespace {

constexpr int kFirstCampaignVersion = 8;

const char* kCampaignColumns = "id, name, recipe, status, created_ms, ended_ms, owner_pid, owner_host, owner_start, "
                               "(SELECT MAX(ended_ms) FROM campaign_problems WHERE campaign_id = campaigns.id)";

CampaignRecord readCampaign(const Statement& row)
{
    CampaignRecord c;
    c.id = row.integer(0);
    c.name = row.text(1);
    c.recipe = row.text(2);
    c.status = row.text(3);
    c.createdMs = row.integer(4);
    c.endedMs = row.optionalInteger(5);
    c.ownerPid = row.optionalInteger(6);
    // What a resume would find, told at once: a killed campaign does not say "running" forever.
    if (c.status == "running" && c.ownerPid && ownerState(ownerOf(row, 6)) == OwnerState::Gone) {
        c.status = "interrupted";
        c.endedMs = row.optionalInteger(9).value_or(c.createdMs);
    }
    return c;
}

Database& writable(std::optional<Database>& db, const std::string& file)
{
    if (!db)
        throw Error("store.read-only", file, {}, "the store was opened for reading");
    return *db;
}

} // namespace

bool retryableCategory(const std::string& category)
{
    return category.starts_with("runner.") || category == "runner-lost" || category == "no-device"
        || category == "cancelled";
}

CampaignStore::CampaignStore(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{
}
CampaignStore::CampaignStore(CampaignStore&&) noexcept = default;
CampaignStore& CampaignStore::operator=(CampaignStore&&) noexcept = default;
CampaignStore::~CampaignStore() = default;

CampaignStore CampaignStore::open(const std::filesystem::path& path, Store::Options options)
{
    auto impl = std::make_unique<Impl>();
    impl->file = path.string();
    if (options.readOnly) {
        Database db = readOnlyConnection(path);
        if (schemaVersionOf(db, "the store") >= kFirstCampaignVersion)
            impl->db.emplace(std::move(db));
    } else {
        Store::open(path, options); // creates, migrates, marks killed sessions
        impl->db.emplace(path, Database::Mode::ReadWrite);
        impl->db->exec("PRAGMA foreign_keys = ON");
        impl->db->exec(options.durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
    }
    return CampaignStore(std::move(impl));
}

std::int64_t CampaignStore::create(
    const std::string& name, const std::string& recipe, const std::vector<std::string>& problems)
{
    auto& db = writable(m_impl->db, m_impl->file);
    Transaction transaction(db);
    if (campaignNamed(name))
        throw Error("store.campaign-exists", m_impl->file, name, "a campaign of this name exists; resume it");
    const auto owner = thisProcess();
    auto insert = db.prepare("INSERT INTO campaigns (name, recipe, status, created_ms, owner_pid, owner_host, "
                             "owner_start) VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6)");
    insert.bind(1, name).bind(2, recipe).bind(3, nowMs()).bind(4, owner.pid).bind(5, owner.host).bind(6, owner.start);
    insert.run();
    const auto id = db.lastInsertId();
    auto row = db.prepare(
        "INSERT INTO campaign_problems (campaign_id, position, problem, status) VALUES (?1, ?2, ?3, 'pending')");
    for (std::size_t i = 0; i < problems.size(); ++i) {
        row.bind(1, id).bind(2, static_cast<std::int64_t>(i)).bind(3, problems[i]).run();
        row.reset();
    }
    transaction.commit();
    return id;
}

std::optional<CampaignRecord> CampaignStore::campaign(std::int64_t id) const
{
    if (!m_impl->db)
        return std::nullopt;
    auto select = m_impl->db->prepare(std::string("SELECT ") + kCampaignColumns + " FROM campaigns WHERE id = ?1");
    select.bind(1, id);
    return select.step() ? std::optional(readCampaign(select)) : std::nullopt;
}

std::optional<CampaignRecord> CampaignStore::campaignNamed(const std::string& name) const
{
    if (!m_impl->db)
        return std::nullopt;
    auto select = m_impl->db->prepare(std::string("SELECT ") + kCampaignColumns + " FROM campaigns WHERE name = ?1");
    select.bind(1, name);
    return select.step() ? std::optional(readCampaign(select)) : std::nullopt;
}

std::vector<CampaignRecord> CampaignStore::list() const
{
    std::vector<CampaignRecord> out;
    if (!m_impl->db)
        return out;
    auto select = m_impl->db->prepare(
        std::string("SELECT ") + kCampaignColumns + " FROM campaigns ORDER BY created_ms DESC, id DESC");
    while (select.step())
        out.push_back(readCampaign(select));
    return out;
}

std::vector<CampaignProblemRecord> CampaignStore::problems(std::int64_t campaignId) const
{
    std::vector<CampaignProblemRecord> out;
    if (!m_impl->db)
        return out;
    auto select = m_impl->db->prepare(
        "SELECT position, problem, status, category, detail, session_id, endpoint, attempts, started_ms, ended_ms "
        "FROM campaign_problems WHERE campaign_id = ?1 ORDER BY position");
    select.bind(1, campaignId);
    while (select.step()) {
        CampaignProblemRecord p;
        p.position = static_cast<int>(select.integer(0));
        p.problem = select.text(1);
        p.status = select.text(2);
        p.category = select.text(3);
        p.detail = select.text(4);
        p.sessionId = select.optionalInteger(5);
        p.endpoint = select.text(6);
        p.attempts = static_cast<int>(select.integer(7));
        p.startedMs = select.optionalInteger(8);
        p.endedMs = select.optionalInteger(9);
        out.push_back(std::move(p));
    }
    return out;
}

int CampaignStore::resume(std::int64_t campaignId)
{
    auto& db = writable(m_impl->db, m_impl->file);
    Transaction transaction(db);
    const auto c = campaign(campaignId);
    if (!c)
        throw Error("store.unknown-campaign", m_impl->file, std::to_string(campaignId), "no such campaign");
    if (c->status == "running" && c->ownerPid && *c->ownerPid != thisProcess().pid)
        throw Error("store.campaign-running", m_impl->file, c->name,
            "the campaign is being run by process " + std::to_string(*c->ownerPid) + "; stop it first");
    const auto owner = thisProcess();
    auto own = db.prepare("UPDATE campaigns SET status = 'running', ended_ms = NULL, owner_pid = ?2, owner_host = ?3, "
                          "owner_start = ?4 WHERE id = ?1");
    own.bind(1, campaignId).bind(2, owner.pid).bind(3, owner.host).bind(4, owner.start).run();
    auto again = db.prepare("UPDATE campaign_problems SET status = 'pending' WHERE campaign_id = ?1 AND "
                            "(status = 'running' OR (status = 'failed' AND (category LIKE 'runner.%' OR category IN "
                            "('runner-lost', 'no-device', 'cancelled'))))");
    again.bind(1, campaignId).run();
    auto pending = db.prepare("SELECT COUNT(*) FROM campaign_problems WHERE campaign_id = ?1 AND status = 'pending'");
    pending.bind(1, campaignId);
    pending.step();
    const int count = static_cast<int>(pending.integer(0));
    transaction.commit();
    return count;
}

void CampaignStore::finish(std::int64_t campaignId, const std::string& status)
{
    auto& db = writable(m_impl->db, m_impl->file);
    auto update = db.prepare("UPDATE campaigns SET status = ?2, ended_ms = ?3 WHERE id = ?1");
    update.bind(1, campaignId).bind(2, status).bind(3, nowMs()).run();
    if (db.changes() == 0)
        throw Error("store.unknown-campaign", m_impl->file, std::to_string(campaignId), "no such campaign");
}

void CampaignStore::startProblem(std::int64_t campaignId, int position, const std::string& endpoint)
{
    auto& db = writable(m_impl->db, m_impl->file);
    auto update = db.prepare("UPDATE campaign_problems SET status = 'running', endpoint = ?3, attempts = attempts + 1, "
                             "started_ms = ?4, ended_ms = NULL, category = '', detail = '' "
                             "WHERE campaign_id = ?1 AND position = ?2");
    update.bind(1, campaignId).bind(2, static_cast<std::int64_t>(position)).bind(3, endpoint).bind(4, nowMs()).run();
    if (db.changes() == 0)
        throw Error("store.unknown-campaign", m_impl->file, std::to_string(campaignId),
            "no problem " + std::to_string(position) + " in this campaign");
}

void CampaignStore::linkSession(std::int64_t campaignId, int position, std::int64_t sessionId)
{
    auto& db = writable(m_impl->db, m_impl->file);
    auto update = db.prepare("UPDATE campaign_problems SET session_id = ?3 WHERE campaign_id = ?1 AND position = ?2");
    update.bind(1, campaignId).bind(2, static_cast<std::int64_t>(position)).bind(3, sessionId).run();
}

void CampaignStore::finishProblem(std::int64_t campaignId, int position, const std::string& status,
    const std::string& category, const std::string& detail, std::optional<std::int64_t> sessionId)
{
    auto& db = writable(m_impl->db, m_impl->file);
    auto update = db.prepare("UPDATE campaign_problems SET status = ?3, category = ?4, detail = ?5, "
                             "session_id = COALESCE(?6, session_id), ended_ms = ?7 "
                             "WHERE campaign_id = ?1 AND position = ?2");
    update.bind(1, campaignId).bind(2, static_cast<std::int64_t>(position)).bind(3, status).bind(4, category);
    update.bind(5, detail).bind(6, sessionId).bind(7, nowMs()).run();
}

} // namespace kl::store
