-- Drives Neovim's own LSP client (0.7 or later) against `semfix server`, as a user would: waits
-- for the diagnostics, places a mark and two extmarks, chooses a quick fix and then fix all from
-- the code action menu (vim.ui.select, answered here), waits for each edit; then writes what it
-- saw (steps, buffer lines, the marks' places, or the error) as JSON to $SEMFIX_NVIM_OUT and quits.
-- tests/test_server_neovim.py runs it; its kernel is that test's.
local out = { steps = {} }
local buf = vim.api.nvim_get_current_buf()
local ns = vim.api.nvim_create_namespace("semfix-test")

local function finish(error)
  out.error = error
  out.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  out.mark = vim.api.nvim_buf_get_mark(buf, "a")
  out.extmarks = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {})
  local file = io.open(os.getenv("SEMFIX_NVIM_OUT"), "w")
  file:write(vim.fn.json_encode(out))
  file:close()
  vim.cmd("qall!")
end

local function wait(what, seconds, condition)
  if not vim.wait(seconds * 1000, condition, 20) then
    finish("timed out waiting for " .. what)
    error("timed out: " .. what)
  end
  table.insert(out.steps, what)
end

local function count()
  return #vim.diagnostic.get(buf)
end

local function choose(wanted)
  vim.ui.select = function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item[2].title:find(wanted, 1, true) then
        table.insert(out.steps, "chose " .. item[2].title)
        return on_choice(item)
      end
    end
    finish("no action titled " .. wanted)
  end
end

local ok, problem = pcall(function()
  wait("diagnostics", 30, function() return count() == 2 end)
  vim.api.nvim_buf_set_mark(buf, "a", 8, 4, {}) -- `o_ref[0]`, below every fix
  vim.api.nvim_buf_set_extmark(buf, ns, 5, 4, {}) -- `pltpu` on the signal's line, before its fix
  vim.api.nvim_buf_set_extmark(buf, ns, 6, 26, {}) -- in `sem` of `sem[...]`, beside the wait's fix
  vim.api.nvim_win_set_cursor(0, { 6, 30 })
  choose("replace")
  vim.lsp.buf.code_action()
  wait("the quick fix", 10, function() return not vim.api.nvim_buf_get_lines(buf, 5, 6, false)[1]:find("[...]", 1, true) end)
  wait("one diagnostic left", 10, function() return count() == 1 end)
  choose("fix all")
  vim.lsp.buf.code_action({ only = { "source.fixAll.semfix" }, diagnostics = {} })
  wait("fix all", 10, function() return not table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"):find("[...]", 1, true) end)
  wait("no diagnostics", 10, function() return count() == 0 end)
end)
finish(not ok and tostring(problem) or nil)
